/**
 * The scenarios: what happens to a site's traffic, when, and what the control loop should do about it.
 * Each scenario is the common traffic (traffic.ts) plus a `pressure` — refusal probabilities, slowness,
 * broken pages — as a function of time and route. The expectations are what judgement 2 was accepted on: a
 * scenario where more than half the traffic ends up refused must pause; route and parser problems must
 * not throttle the site; quiet, daily-swing, always-challenging, load-only and one-bad-minute traffic
 * must not degrade it.
 *
 * `expectedTopReason` names the reason key of the true cause — a health signal (`hard_block`,
 * `challenge`, `soft_block`, `latency`), `route_specific` or an `extraction_*` key. Product rules that head
 * the reasons whatever the cause (`total_refusal`) are not causes and are meant to be skipped when the
 * top reason is compared with it.
 */
import type { ScenarioCause, ScenarioTruth } from './truth';
import type { Protection } from './pages';
import { DAY_MS, diurnal, HOUR_MS, MINUTE_MS, type Pressure, type RequestInfo, type Timeline } from './traffic';

export interface ScenarioDefinition {
  name: string;
  description: string;
  cause: ScenarioCause;
  expectedTopReason: string | null;
  expect: ScenarioTruth['expect'];
  protection: Protection;
  /** Volume (requests per minute, mean) and daily swing; defaults: 6 / 40 and 0.6 / 0.25. */
  rates?: { history: number; incident: number; historyDiurnal: number; incidentDiurnal: number };
  /**
   * When the cause starts, in ms from the incident day's start (negative: during the history), before
   * a seeded jitter of up to 45 minutes; null: nothing starts.
   */
  onsetAfterMs: ((timeline: Timeline) => number) | null;
  /** Onset on a whole minute (the jitter in whole minutes). */
  onsetOnMinute?: boolean;
  pressure?: (request: RequestInfo, onset: number, timeline: Timeline) => Pressure | undefined;
}

/** 0 before `from`, rising linearly to 1 over `durationMs`. */
const ramp = (t: number, from: number, durationMs: number): number => Math.min(1, Math.max(0, (t - from) / durationMs));
const at = (hours: number) => (): number => hours * HOUR_MS;

const NOTHING: ScenarioTruth['expect'] = { pause: false, degrade: false, routeAlert: null, parserAlert: false };
const RESIST: ScenarioTruth['expect'] = { pause: true, degrade: true, routeAlert: null, parserAlert: false };

export const SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: 'quiet',
    description: 'nothing happens: the background of a healthy site for the whole period',
    cause: 'none',
    expectedTopReason: null,
    expect: NOTHING,
    protection: 'cloudflare',
    onsetAfterMs: null,
  },
  {
    name: 'gradual-hostility',
    description: 'hard blocks (Akamai 403s, 429s, resets) climb from nothing to 90 % over six hours',
    cause: 'hard_block',
    expectedTopReason: 'hard_block',
    expect: RESIST,
    protection: 'akamai',
    onsetAfterMs: at(5),
    pressure: ({ t }, onset) =>
      t < onset
        ? undefined
        : {
            hard: 0.9 * ramp(t, onset, 6 * HOUR_MS),
            hardKinds: ['akamai-denied', 'akamai-denied', 'rate-limited', 'connection-reset'],
          },
  },
  {
    name: 'sudden-wall',
    description: 'at onset 97 % of requests get a Cloudflare 403 block page, until the end of the day',
    cause: 'hard_block',
    expectedTopReason: 'hard_block',
    expect: RESIST,
    protection: 'cloudflare',
    onsetAfterMs: at(14),
    pressure: ({ t }, onset) => (t < onset ? undefined : { hard: 0.97, hardKinds: ['cloudflare-block'] }),
  },
  {
    name: 'challenge-wave',
    description:
      'for five hours ~80 % of requests are refused: 55 % PerimeterX press-and-hold challenges, 25 % soft blocks',
    cause: 'challenge',
    expectedTopReason: 'challenge',
    expect: RESIST,
    protection: 'perimeterx',
    onsetAfterMs: at(9),
    pressure: ({ t }, onset) => {
      const level = ramp(t, onset, 10 * MINUTE_MS) * (1 - ramp(t, onset + 5 * HOUR_MS, 20 * MINUTE_MS));
      if (level <= 0) return undefined;
      return {
        challenge: 0.55 * level,
        challengeKinds: ['perimeterx-captcha'],
        soft: 0.25 * level,
        softKinds: ['perimeterx-denied-200', 'small-page'],
      };
    },
  },
  {
    name: 'soft-blocks',
    description:
      '65 % of answers become 200s that are tiny shells, empty of records or "unusual traffic" pages (ramp of ' +
      '20 minutes)',
    cause: 'soft_block',
    expectedTopReason: 'soft_block',
    expect: RESIST,
    protection: 'none',
    onsetAfterMs: at(12),
    pressure: ({ t }, onset) =>
      t < onset
        ? undefined
        : {
            soft: 0.65 * ramp(t, onset, 20 * MINUTE_MS),
            softKinds: ['small-page', 'small-page', 'empty-records', 'empty-records', 'unusual-traffic'],
          },
  },
  {
    name: 'tarpit',
    description:
      'DataDome slows the crawler down (latency ×6 over 90 minutes, some timeouts), then refuses 75 % (429s, 403s)',
    cause: 'mixed',
    expectedTopReason: 'hard_block',
    expect: RESIST,
    protection: 'datadome',
    onsetAfterMs: at(10),
    pressure: ({ t }, onset) => {
      if (t < onset) return undefined;
      const slow = ramp(t, onset, 90 * MINUTE_MS);
      return {
        latency: 1 + 5 * slow,
        error: 0.05 * slow,
        errorKinds: ['timeout'],
        hard: 0.75 * ramp(t, onset + 90 * MINUTE_MS, HOUR_MS),
        hardKinds: ['datadome-429', 'datadome-429', 'bare-403'],
      };
    },
  },
  {
    name: 'dead-pool',
    description:
      'the proxy pool dc-3 (12 % of traffic, three countries) is burned: 85 % refused, 10 % proxy errors; ' +
      'other pools fine',
    cause: 'route',
    expectedTopReason: 'route_specific',
    expect: { pause: false, degrade: false, routeAlert: 'pool=dc-3', parserAlert: false },
    protection: 'cloudflare',
    onsetAfterMs: at(11),
    pressure: ({ t, route }, onset) =>
      t < onset || route.pool !== 'dc-3'
        ? undefined
        : {
            hard: 0.85,
            hardKinds: ['cloudflare-banned-ip', 'cloudflare-banned-ip', 'connection-reset'],
            error: 0.1,
            errorKinds: ['proxy-error', 'timeout'],
          },
  },
  {
    name: 'dead-country',
    description:
      'the site bans Brazil (9 % of traffic over three pools): 95 % of BR requests get Cloudflare error 1009',
    cause: 'route',
    expectedTopReason: 'route_specific',
    expect: { pause: false, degrade: false, routeAlert: 'country=BR', parserAlert: false },
    protection: 'cloudflare',
    onsetAfterMs: at(13),
    pressure: ({ t, route }, onset) =>
      t < onset || route.country !== 'BR' ? undefined : { hard: 0.95, hardKinds: ['cloudflare-country'] },
  },
  {
    name: 'redesign',
    description:
      'the site ships a new layout: product and listing pages still load but their price (and availability) ' +
      'fields are gone',
    cause: 'parser',
    expectedTopReason: 'extraction_missing_fields',
    expect: { pause: false, degrade: false, routeAlert: null, parserAlert: true },
    protection: 'akamai',
    onsetAfterMs: at(10),
    pressure: ({ t }, onset) => (t < onset ? undefined : { parserBroken: true, sizeFactor: 1.12 }),
  },
  {
    name: 'load-latency',
    description: 'the origin is overloaded for three hours: latency ×3.5, a few 5xx and timeouts, no refusals',
    cause: 'load',
    expectedTopReason: 'latency',
    expect: NOTHING,
    protection: 'none',
    onsetAfterMs: at(15),
    pressure: ({ t }, onset) => {
      const level = ramp(t, onset, 30 * MINUTE_MS) * (1 - ramp(t, onset + 3 * HOUR_MS, 30 * MINUTE_MS));
      if (level <= 0) return undefined;
      return {
        latency: 1 + 2.5 * level,
        error: 0.04 * level,
        errorKinds: ['server-error', 'server-error', 'server-error', 'timeout'],
      };
    },
  },
  {
    name: 'always-challenging',
    description:
      'the site always challenges ~8 % of requests (Cloudflare managed challenge), history included; nothing changes',
    cause: 'none',
    expectedTopReason: null,
    expect: NOTHING,
    protection: 'cloudflare',
    onsetAfterMs: null,
    pressure: () => ({ challenge: 0.08, challengeKinds: ['cloudflare-challenge'] }),
  },
  {
    name: 'diurnal',
    description:
      'strong daily swings every day: volume ×19 peak to trough, challenges and blocks up to 3.5 % at night, ' +
      'latency ×1.8 at peak',
    cause: 'none',
    expectedTopReason: null,
    expect: NOTHING,
    protection: 'cloudflare',
    rates: { history: 6, incident: 40, historyDiurnal: 0.9, incidentDiurnal: 0.9 },
    onsetAfterMs: null,
    pressure: ({ t }) => {
      const day = diurnal(t, 1) / 2; // 0 at 03:00 UTC, 1 at 15:00 UTC
      const night = 1 - day;
      return { challenge: 0.002 + 0.025 * night, hard: 0.001 + 0.01 * night, latency: 1 + 0.8 * day };
    },
  },
  {
    name: 'bad-minute',
    description: 'one minute of 95 % rate limiting (429s, Cloudflare blocks), then back to normal',
    cause: 'hard_block',
    expectedTopReason: 'hard_block',
    expect: NOTHING,
    protection: 'cloudflare',
    onsetAfterMs: at(16),
    onsetOnMinute: true,
    pressure: ({ t }, onset) =>
      t < onset || t >= onset + MINUTE_MS
        ? undefined
        : { hard: 0.95, hardKinds: ['rate-limited', 'rate-limited', 'cloudflare-block'] },
  },
  {
    name: 'slow-creep',
    description:
      'rate limiting tightens over three days before the incident day (doubling daily) to 60 % at its end; the ' +
      'baseline absorbs the start',
    cause: 'hard_block',
    expectedTopReason: 'hard_block',
    expect: RESIST,
    protection: 'none',
    // Three days back, or the whole history when it is shorter.
    onsetAfterMs: (timeline) => -Math.min(3 * DAY_MS, timeline.incidentStart - timeline.historyStart),
    pressure: ({ t }, onset, timeline) => {
      if (t < onset) return undefined;
      const span = (timeline.end - onset) / DAY_MS;
      const share = (0.6 * (2 ** ((t - onset) / DAY_MS) - 1)) / (2 ** span - 1);
      return { hard: share, hardKinds: ['rate-limited', 'rate-limited', 'bare-403'] };
    },
  },
  {
    name: 'low-traffic',
    description:
      'a quiet site crawled at under one request a minute (0.5/min history, 0.8/min incident day); nothing happens',
    cause: 'none',
    expectedTopReason: null,
    expect: NOTHING,
    protection: 'none',
    rates: { history: 0.5, incident: 0.8, historyDiurnal: 0.5, incidentDiurnal: 0.5 },
    onsetAfterMs: null,
  },
];

export const SCENARIO_NAMES: readonly string[] = SCENARIOS.map((s) => s.name);

export function findScenario(name: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
