/**
 * The common traffic generator: minute by minute, how many requests the fleet sends to a site, over
 * which routes and page types, and what each gets back — a quiet site's background of occasional blocks,
 * challenges and errors, plus whatever the scenario's `pressure` adds at that time and on that route.
 *
 * Each minute is generated in two steps from two seeded streams: the *plan* (count, times, routes,
 * intended outcomes) and the *rendering* (which page, its size, latency, body). The truth is computed
 * from plans alone, cheaply; events are rendered lazily, a minute at a time, so a 200,000-event scenario
 * never sits in memory. Pure: time comes in through the timeline, randomness from the seed.
 */
import type { Outcome, RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import {
  PAGE_TYPES,
  PAGE_WEIGHTS,
  PAGES,
  ROUTE_WEIGHT_TOTAL,
  ROUTE_WEIGHTS,
  ROUTES,
  type PageType,
  type RouteSpec,
} from './fleet';
import {
  normalPageHead,
  pathOf,
  renderPage,
  type ChallengeKind,
  type ErrorKind,
  type HardKind,
  type PageContext,
  type Protection,
  type Response,
  type SoftKind,
} from './pages';
import { mixSeed, Rng } from './rng';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** The scenario's time base: quiet history days, then the incident day; half-open, whole minutes. */
export interface Timeline {
  historyStart: number;
  incidentStart: number;
  end: number;
}

/** What a scenario does to one request: refusal and error probabilities, slowness, broken pages. */
export interface Pressure {
  hard?: number;
  hardKinds?: readonly HardKind[];
  challenge?: number;
  challengeKinds?: readonly ChallengeKind[];
  soft?: number;
  softKinds?: readonly SoftKind[];
  error?: number;
  errorKinds?: readonly ErrorKind[];
  /** Multiple of the origin's latency. */
  latency?: number;
  /** The site's pages changed: product and listing extractions miss their required fields. */
  parserBroken?: boolean;
  /** Multiple of normal page sizes (a redesign changes them a little). */
  sizeFactor?: number;
}

export interface RequestInfo {
  t: number;
  route: RouteSpec;
  pageType: PageType;
}

export interface TrafficModel {
  host: string;
  protection: Protection;
  /** Mean requests per minute on history days and on the incident day. */
  historyRate: number;
  incidentRate: number;
  /** Daily swing of the volume (0: flat; 0.6: the busiest hour has 4× the quietest). */
  historyDiurnal: number;
  incidentDiurnal: number;
  /** The scenario at work; undefined: nothing beyond the background. */
  pressure?: (request: RequestInfo, timeline: Timeline) => Pressure | undefined;
}

/** A generated event with the outcome the generator meant (hidden from the event itself). */
export interface LabelledEvent {
  event: RequestOutcomeEventInput;
  intended: Outcome;
}

/** Background of a quiet site: rare refusals and ordinary failures. */
const BACKGROUND = { hard: 0.005, challenge: 0.003, soft: 0.0015, error: 0.014 } as const;
const BACKGROUND_ERRORS: readonly ErrorKind[] = [
  'not-found',
  'not-found',
  'not-found',
  'not-found',
  'not-found',
  'not-found',
  'server-error',
  'server-error',
  'timeout',
  'proxy-error',
];

/** Which pages a site's own protection answers with, when it refuses in the background. */
const BACKGROUND_KINDS: Readonly<
  Record<Protection, { hard: readonly HardKind[]; challenge: readonly ChallengeKind[]; soft: readonly SoftKind[] }>
> = {
  cloudflare: {
    hard: ['cloudflare-block', 'rate-limited', 'connection-reset'],
    challenge: ['cloudflare-challenge'],
    soft: ['small-page', 'empty-records'],
  },
  akamai: {
    hard: ['akamai-denied', 'rate-limited', 'connection-reset'],
    challenge: ['security-check-200'],
    soft: ['small-page', 'empty-records'],
  },
  datadome: {
    hard: ['datadome-429', 'bare-403'],
    challenge: ['datadome-captcha'],
    soft: ['small-page', 'empty-records'],
  },
  perimeterx: {
    hard: ['bare-403', 'rate-limited'],
    challenge: ['perimeterx-captcha'],
    soft: ['perimeterx-denied-200', 'small-page'],
  },
  none: {
    hard: ['bare-403', 'rate-limited', 'connection-reset'],
    challenge: ['security-check-200'],
    soft: ['small-page', 'unusual-traffic', 'empty-records'],
  },
};

/** Share of normal pages whose body the crawler samples (it always sends small and non-200 bodies). */
const SAMPLED_BODIES = 0.03;
/** Pages up to this size always travel with their body. */
const SMALL_BODY_BYTES = 16_384;

/** Volume multiple at a time of day: peaks mid-afternoon UTC, lowest in the small hours; mean 1. */
export function diurnal(t: number, amplitude: number): number {
  const hour = (((t % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS;
  return 1 + amplitude * Math.sin((2 * Math.PI * (hour - 9)) / 24);
}

interface PlannedRequest {
  t: number;
  route: RouteSpec;
  pageType: PageType;
  intended: Outcome;
  /** The pages this outcome is drawn from (the scenario's, or the site's background ones). */
  kinds: readonly string[];
  pressure: Pressure | undefined;
}

/** The minute's requests and their intended outcomes (the cheap half: no bodies). */
export function planMinute(model: TrafficModel, timeline: Timeline, seed: number, minute: number): PlannedRequest[] {
  const start = timeline.historyStart + minute * MINUTE_MS;
  const rng = new Rng(mixSeed(seed, minute, 1));
  const incident = start >= timeline.incidentStart;
  const mean =
    (incident ? model.incidentRate : model.historyRate) *
    diurnal(start + MINUTE_MS / 2, incident ? model.incidentDiurnal : model.historyDiurnal);
  const n = rng.poisson(mean);
  const offsets: number[] = [];
  for (let i = 0; i < n; i++) offsets.push(Math.floor(rng.next() * MINUTE_MS));
  offsets.sort((a, b) => a - b);
  const background = BACKGROUND_KINDS[model.protection];
  const planned: PlannedRequest[] = [];
  for (const offset of offsets) {
    const t = start + offset;
    const route = ROUTES[rng.weighted(ROUTE_WEIGHTS, ROUTE_WEIGHT_TOTAL)]!;
    const pageType = PAGE_TYPES[rng.weighted(PAGE_WEIGHTS, 1)]!;
    const pressure = model.pressure?.({ t, route, pageType }, timeline);
    let u = rng.next();
    const pick = (p: number | undefined): boolean => {
      if (p === undefined || p <= 0) return false;
      if (u < p) return true;
      u -= p;
      return false;
    };
    let intended: Outcome = 'ok';
    let kinds: readonly string[] = [];
    if (pick(pressure?.hard)) [intended, kinds] = ['hard_block', pressure!.hardKinds ?? background.hard];
    else if (pick(pressure?.challenge))
      [intended, kinds] = ['challenge', pressure!.challengeKinds ?? background.challenge];
    else if (pick(pressure?.soft)) [intended, kinds] = ['soft_block', pressure!.softKinds ?? background.soft];
    else if (pick(pressure?.error)) [intended, kinds] = ['error', pressure!.errorKinds ?? BACKGROUND_ERRORS];
    else {
      // What the scenario did not decide, the background does, over the rest of the probability.
      const rest =
        1 - (pressure?.hard ?? 0) - (pressure?.challenge ?? 0) - (pressure?.soft ?? 0) - (pressure?.error ?? 0);
      u /= Math.max(rest, 1e-9);
      if (pick(BACKGROUND.hard)) [intended, kinds] = ['hard_block', background.hard];
      else if (pick(BACKGROUND.challenge)) [intended, kinds] = ['challenge', background.challenge];
      else if (pick(BACKGROUND.soft)) [intended, kinds] = ['soft_block', background.soft];
      else if (pick(BACKGROUND.error)) [intended, kinds] = ['error', BACKGROUND_ERRORS];
    }
    planned.push({ t, route, pageType, intended, kinds, pressure });
  }
  return planned;
}

/** Per-minute outcome counts of the plan (what the truth is computed from). */
export interface MinuteCounts {
  requests: number;
  hardBlocks: number;
  challenges: number;
  softBlocks: number;
}

export function countMinute(planned: readonly PlannedRequest[]): MinuteCounts {
  const counts: MinuteCounts = { requests: planned.length, hardBlocks: 0, challenges: 0, softBlocks: 0 };
  for (const p of planned) {
    if (p.intended === 'hard_block') counts.hardBlocks++;
    else if (p.intended === 'challenge') counts.challenges++;
    else if (p.intended === 'soft_block') counts.softBlocks++;
  }
  return counts;
}

const round = (x: number): number => Math.round(x);

function originLatency(rng: Rng, p: PlannedRequest): number {
  const page = PAGES[p.pageType];
  return rng.logNormal(page.medianLatencyMs, page.latencySigma) * p.route.latency * (p.pressure?.latency ?? 1);
}

/** A normal page (or one served normal-looking but empty: `empty-records`). */
function normalPage(
  rng: Rng,
  p: PlannedRequest,
  model: TrafficModel,
  context: PageContext,
  refused: boolean,
): { response: Response; extraction: NonNullable<RequestOutcomeEventInput['extraction']> } {
  const page = PAGES[p.pageType];
  let bytes = rng.logNormal(page.medianBytes * (p.pressure?.sizeFactor ?? 1), page.bytesSigma);
  let extraction: NonNullable<RequestOutcomeEventInput['extraction']>;
  if (refused) {
    extraction = { result: 'empty', validRecords: 0 };
  } else if (rng.chance(page.legitEmpty)) {
    bytes *= page.emptySizeShare;
    extraction = { result: 'empty', validRecords: 0 };
  } else if (p.pressure?.parserBroken && p.pageType !== 'search') {
    extraction = {
      result: 'missing_fields',
      missingFields: p.pageType === 'product' ? ['price', 'availability'] : ['price'],
      validRecords: 0,
    };
  } else if (p.pageType === 'product' && rng.chance(0.005)) {
    // A product page now and then lacks a required field (a product without a rating yet).
    extraction = { result: 'missing_fields', missingFields: ['rating'], validRecords: 0 };
  } else {
    extraction = { result: 'ok', validRecords: rng.int(page.records[0], page.records[1]) };
  }
  const response: Response = { status: 200, bytes: round(bytes), edge: false };
  if (rng.chance(SAMPLED_BODIES)) Object.assign(response, normalPageHead(rng, model.protection, context));
  return { response, extraction };
}

/** Renders one planned request into the event a crawler would send. */
function render(rng: Rng, p: PlannedRequest, model: TrafficModel, eventId: string): RequestOutcomeEventInput {
  const context: PageContext = {
    host: model.host,
    pageType: p.pageType,
    path: pathOf(rng, p.pageType),
    country: p.route.country,
    ts: p.t,
  };
  let kind = p.kinds.length > 0 ? rng.pick(p.kinds) : 'ok';
  // An empty result only reads as a refusal where the page type usually has records: elsewhere the
  // site serves a cut-down page instead.
  if (kind === 'empty-records' && p.pageType === 'search') kind = 'small-page';
  let response: Response;
  let extraction: RequestOutcomeEventInput['extraction'];
  if (kind === 'ok' || kind === 'empty-records') {
    ({ response, extraction } = normalPage(rng, p, model, context, kind === 'empty-records'));
  } else {
    response = renderPage(kind as Parameters<typeof renderPage>[0], rng, context);
    // A crawler parses what came back with a 2xx; a refusal status it does not try to parse.
    if (response.status !== undefined && response.status >= 200 && response.status < 300)
      extraction = { result: 'empty', validRecords: 0 };
  }
  let latency: number;
  if (response.networkError === 'timeout') latency = 30_000 + rng.int(0, 250);
  else if (response.networkError === 'proxy') latency = rng.logNormal(4_000, 0.3);
  else if (response.edge) latency = rng.logNormal(90, 0.5) * p.route.latency;
  else latency = originLatency(rng, p) * (kind === 'ok' || kind === 'empty-records' || kind === 'not-found' ? 1 : 0.6);

  const refused = p.intended === 'hard_block' || p.intended === 'challenge' || p.intended === 'soft_block';
  const retries = refused
    ? rng.int(0, 2)
    : response.networkError === 'timeout'
      ? rng.int(1, 3)
      : rng.chance(0.05)
        ? 1
        : 0;
  const event: RequestOutcomeEventInput = {
    eventId,
    ts: new Date(p.t).toISOString(),
    site: model.host,
    route: { country: p.route.country, pool: p.route.pool, session: p.route.session },
    pageType: p.pageType,
    latencyMs: round(latency),
  };
  if (response.networkError !== undefined) event.networkError = response.networkError;
  else event.status = response.status!;
  if (response.bytes !== undefined) event.bytes = response.bytes;
  event.retries = retries;
  event.credits = response.networkError === 'proxy' ? 0 : p.route.credits;
  if (extraction !== undefined) event.extraction = extraction;
  if (response.headers !== undefined) event.headers = response.headers;
  if (response.title !== undefined) event.title = response.title;
  if (
    response.bodySample !== undefined &&
    (response.bytes === undefined ||
      response.bytes <= SMALL_BODY_BYTES ||
      response.status !== 200 ||
      response.title !== undefined)
  ) {
    event.bodySample = response.bodySample;
  }
  return event;
}

/** Every minute of the timeline, in order: its events with their intended outcomes. */
export function* labelledTraffic(
  model: TrafficModel,
  timeline: Timeline,
  seed: number,
  idPrefix: string,
): Generator<LabelledEvent> {
  const minutes = (timeline.end - timeline.historyStart) / MINUTE_MS;
  let n = 0;
  for (let m = 0; m < minutes; m++) {
    const planned = planMinute(model, timeline, seed, m);
    if (planned.length === 0) continue;
    const rng = new Rng(mixSeed(seed, m, 2));
    for (const p of planned) yield { event: render(rng, p, model, `${idPrefix}-${n++}`), intended: p.intended };
  }
}
