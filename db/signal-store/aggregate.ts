/**
 * Turns a batch of classified events into rollup deltas (per level, site, bucket and route) and norm
 * deltas (per site, page type and day). Pure: ingestion computes deltas here and adds them to the
 * stored rollups in one transaction with the raw rows.
 */
import { BYTES_HISTOGRAM, LATENCY_HISTOGRAM, bucketIndex, emptyHistogram } from '../../signals/histogram';
import type { Classification } from '../../signals/classify';
import type { RequestOutcomeEvent } from '../../signals/event';

export interface ClassifiedEvent {
  event: RequestOutcomeEvent;
  classification: Classification;
}

export type RollupLevel = 'minute' | 'hour' | 'day';
export const ROLLUP_LEVELS: readonly RollupLevel[] = ['minute', 'hour', 'day'];
const LEVEL_MS: Record<RollupLevel, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The all-routes row; it alone carries the latency histogram. */
export const ALL_ROUTES = '*';

export function routeKey(route: RequestOutcomeEvent['route']): string {
  return `${route.country ?? ''}|${route.pool ?? ''}|${route.session ?? ''}`;
}

export function bucketStart(level: RollupLevel, ts: number): number {
  return ts - (((ts % LEVEL_MS[level]) + LEVEL_MS[level]) % LEVEL_MS[level]);
}

export interface RollupDelta {
  site: string;
  bucket: number;
  routeKey: string;
  country: string | null;
  pool: string | null;
  session: string | null;
  requests: number;
  ok: number;
  hardBlocks: number;
  challenges: number;
  softBlocks: number;
  errors: number;
  extractionOk: number;
  extractionMissing: number;
  extractionSchema: number;
  extractionEmpty: number;
  validRecords: number;
  retries: number;
  bytes: number;
  credits: number;
  canaryRuns: number;
  canaryFailures: number;
  latencyHist: number[] | null;
}

export interface NormDelta {
  site: string;
  pageType: string;
  /** UTC day start, epoch ms. */
  day: number;
  responses: number;
  withRecords: number;
  extractions: number;
  bytesHist: number[];
}

function emptyDelta(site: string, bucket: number, key: string, route: RequestOutcomeEvent['route'] | null): RollupDelta {
  return {
    site,
    bucket,
    routeKey: key,
    country: route?.country ?? null,
    pool: route?.pool ?? null,
    session: route?.session ?? null,
    requests: 0,
    ok: 0,
    hardBlocks: 0,
    challenges: 0,
    softBlocks: 0,
    errors: 0,
    extractionOk: 0,
    extractionMissing: 0,
    extractionSchema: 0,
    extractionEmpty: 0,
    validRecords: 0,
    retries: 0,
    bytes: 0,
    credits: 0,
    canaryRuns: 0,
    canaryFailures: 0,
    latencyHist: key === ALL_ROUTES ? emptyHistogram(LATENCY_HISTOGRAM) : null,
  };
}

const REFUSED = new Set(['hard_block', 'challenge', 'soft_block']);

function add(d: RollupDelta, e: RequestOutcomeEvent, c: Classification, latencyBucket: number): void {
  d.requests += 1;
  switch (c.outcome) {
    case 'ok':
      d.ok += 1;
      break;
    case 'hard_block':
      d.hardBlocks += 1;
      break;
    case 'challenge':
      d.challenges += 1;
      break;
    case 'soft_block':
      d.softBlocks += 1;
      break;
    case 'error':
      d.errors += 1;
      break;
  }
  // Extraction outcomes count only for responses that were not refused: a challenge page is a
  // challenge, not a parser failure (scoring/window.ts states the rule).
  if (e.extraction && !REFUSED.has(c.outcome)) {
    if (e.extraction.result === 'ok') d.extractionOk += 1;
    else if (e.extraction.result === 'missing_fields') d.extractionMissing += 1;
    else if (e.extraction.result === 'schema_mismatch') d.extractionSchema += 1;
    else d.extractionEmpty += 1;
  }
  d.validRecords += e.extraction?.validRecords ?? 0;
  d.retries += e.retries ?? 0;
  d.bytes += e.bytes ?? 0;
  d.credits += e.credits ?? 0;
  if (e.canary) {
    d.canaryRuns += 1;
    if (c.outcome !== 'ok') d.canaryFailures += 1;
  }
  if (d.latencyHist) d.latencyHist[latencyBucket] = (d.latencyHist[latencyBucket] ?? 0) + 1;
}

/**
 * Rollup deltas for every level, sorted by key (a stable lock order for concurrent ingesters).
 * Hot path of ingestion: keys are numbers and per-event work (route key, latency bucket) is done once.
 */
export function rollupDeltas(events: readonly ClassifiedEvent[]): Record<RollupLevel, RollupDelta[]> {
  // level → site → bucket → route key → delta
  const maps = ROLLUP_LEVELS.map(() => new Map<string, Map<number, Map<string, RollupDelta>>>());
  for (const { event: e, classification: c } of events) {
    const latencyBucket = bucketIndex(LATENCY_HISTOGRAM, e.latencyMs);
    const rk = routeKey(e.route);
    for (let l = 0; l < ROLLUP_LEVELS.length; l++) {
      const level = ROLLUP_LEVELS[l]!;
      const bySite = maps[l]!;
      let byBucket = bySite.get(e.site);
      if (!byBucket) bySite.set(e.site, (byBucket = new Map<number, Map<string, RollupDelta>>()));
      const bucket = bucketStart(level, e.ts);
      let byRoute = byBucket.get(bucket);
      if (!byRoute) byBucket.set(bucket, (byRoute = new Map<string, RollupDelta>()));
      let all = byRoute.get(ALL_ROUTES);
      if (!all) byRoute.set(ALL_ROUTES, (all = emptyDelta(e.site, bucket, ALL_ROUTES, null)));
      add(all, e, c, latencyBucket);
      let one = byRoute.get(rk);
      if (!one) byRoute.set(rk, (one = emptyDelta(e.site, bucket, rk, e.route)));
      add(one, e, c, latencyBucket);
    }
  }
  const out = {} as Record<RollupLevel, RollupDelta[]>;
  ROLLUP_LEVELS.forEach((level, l) => {
    const list: RollupDelta[] = [];
    for (const byBucket of maps[l]!.values()) for (const byRoute of byBucket.values()) for (const d of byRoute.values()) list.push(d);
    out[level] = list.sort(compareDeltas);
  });
  return out;
}

function compareDeltas(a: RollupDelta, b: RollupDelta): number {
  return a.site < b.site ? -1 : a.site > b.site ? 1 : a.bucket - b.bucket || (a.routeKey < b.routeKey ? -1 : a.routeKey > b.routeKey ? 1 : 0);
}

/**
 * Norm deltas: what a normal response of a page type looks like. Only responses classified ok with a
 * 2xx status count, so soft blocks never become the norm they are measured against.
 */
export function normDeltas(events: readonly ClassifiedEvent[]): NormDelta[] {
  const byKey = new Map<string, NormDelta>();
  for (const { event: e, classification: c } of events) {
    if (c.outcome !== 'ok' || e.status === undefined || e.status < 200 || e.status >= 300 || !e.pageType || e.canary) continue;
    const day = bucketStart('day', e.ts);
    const key = `${e.site}\u0000${e.pageType}\u0000${day}`;
    let d = byKey.get(key);
    if (!d) {
      d = { site: e.site, pageType: e.pageType, day, responses: 0, withRecords: 0, extractions: 0, bytesHist: emptyHistogram(BYTES_HISTOGRAM) };
      byKey.set(key, d);
    }
    if (e.bytes !== undefined) {
      d.responses += 1;
      const i = bucketIndex(BYTES_HISTOGRAM, e.bytes);
      d.bytesHist[i] = (d.bytesHist[i] ?? 0) + 1;
    }
    if (e.extraction) {
      d.extractions += 1;
      const records = e.extraction.validRecords ?? (e.extraction.result === 'ok' ? 1 : 0);
      if (records > 0) d.withRecords += 1;
    }
  }
  return [...byKey.values()].sort((a, b) => (a.site < b.site ? -1 : a.site > b.site ? 1 : a.pageType < b.pageType ? -1 : a.pageType > b.pageType ? 1 : a.day - b.day));
}
