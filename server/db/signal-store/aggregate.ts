/**
 * Turns a batch of classified events into rollup deltas (per level, site, bucket and route) and norm
 * deltas (per site, page type and day). Pure: ingestion computes deltas here and adds them to the
 * stored rollups in one transaction with the raw rows.
 */
import { BYTES_HISTOGRAM, LATENCY_HISTOGRAM, bucketIndex, emptyHistogram } from '../../../core/signals/histogram';
import type { Classification } from '@target-health/crawler/events/classify';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';

export interface ClassifiedEvent {
  event: RequestOutcomeEvent;
  classification: Classification;
}

export type RollupLevel = 'minute' | 'hour' | 'day';
export const ROLLUP_LEVELS: readonly RollupLevel[] = ['minute', 'hour', 'day'];
/** The rollup table of each level: fixed names (never built from input), the only ones SQL may interpolate. */
export const ROLLUP_TABLE: Readonly<Record<RollupLevel, string>> = {
  minute: 'rollup_minute',
  hour: 'rollup_hour',
  day: 'rollup_day',
};
const LEVEL_MS: Record<RollupLevel, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The all-routes row; it alone carries the latency histogram. */
export const ALL_ROUTES = '*';
/**
 * The row that routes beyond a site's daily cap fold into (cardinality.ts). Its labels are "(other)",
 * which no crawler can send (labels start with a letter or digit), so readers show it as its own route.
 */
export const OTHER_ROUTES = 'other';
export const OTHER_LABEL = '(other)';
/** Page types beyond a site's daily cap fold into this one in the norms (same reason for the parentheses). */
export const OTHER_PAGE_TYPE = '(other)';

/** Whether a route key (or page type) of a site and UTC day keeps its own rollup (or norm) rows. */
export type KeepKey = (site: string, day: number, key: string) => boolean;

/** The distinct keys of a batch, per site and UTC day: what the cardinality cap decides on. */
export interface DayKeys {
  site: string;
  day: number;
  keys: Set<string>;
}

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
  /**
   * Counts per latency bucket on the all-routes row (null on route rows). As long as its highest
   * non-empty bucket, not the scheme's 275: a minute of a few events fills a few buckets, and full-size
   * arrays (allocated, copied and merged for every minute, hour and day delta) were the largest cost
   * of aggregating a sparse batch (a back-fill over many sites and days). Missing buckets count 0, in
   * SQL too (th_hist_add).
   */
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

function emptyDelta(
  site: string,
  bucket: number,
  key: string,
  route: RequestOutcomeEvent['route'] | null,
): RollupDelta {
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
    latencyHist: key === ALL_ROUTES ? [] : null,
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
  // challenge, not a parser failure (core/scoring/window.ts states the rule).
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
  if (d.latencyHist) countInto(d.latencyHist, latencyBucket, 1);
}

/** Adds `n` to bucket `i` of a short histogram, growing it with zeros (kept packed: no holes). */
function countInto(hist: number[], i: number, n: number): void {
  while (hist.length <= i) hist.push(0);
  hist[i]! += n;
}

/** The deltas of one (site, bucket): the all-routes row and one per route. */
interface Slot {
  all: RollupDelta;
  routes: Map<string, RollupDelta>;
}

export interface BatchAggregatorOptions {
  /**
   * Epoch ms of the first UTC day that keeps minute rollups (the minute retention's; ingest.ts
   * `firstMinuteDay`). Events before it are aggregated straight into hour slots and make no minute
   * deltas: in a back-fill most events are that old, and a minute slot per site and minute (a few events
   * each) was most of the aggregation's cost, for rows that were then thrown away. Undefined: every
   * event makes minute deltas.
   */
  minuteFrom?: number;
}

/**
 * Accumulates a batch into rollup and norm deltas, one event at a time. Hot path of ingestion, so
 * the per-event work is one aggregation at the finest level kept (minute, or hour for days without
 * minute rows); coarser deltas are merged from those afterwards (~50 rows per batch instead of 3 ×
 * 5,000 events), and consecutive events of one site and bucket reuse the last lookup.
 */
export class BatchAggregator {
  /** Per site, per bucket start: minute slots (days keeping minute rows) and hour slots (older days). */
  private readonly minutes = new Map<string, Map<number, Slot>>();
  private readonly hours = new Map<string, Map<number, Slot>>();
  private readonly norms = new Map<string, Map<string, Map<number, NormDelta>>>();
  private readonly minuteFrom: number;
  private lastSite = '';
  private lastBucket = NaN;
  private lastSlot: Slot | undefined;

  constructor(options: BatchAggregatorOptions = {}) {
    this.minuteFrom = options.minuteFrom ?? -Infinity;
  }

  add(e: RequestOutcomeEvent, c: Classification): void {
    const byMinute = e.ts >= this.minuteFrom;
    // Minute and hour buckets never share a start within one batch's slots: minute buckets all lie at
    // or after minuteFrom (a day start), hour buckets all before it.
    const bucket = bucketStart(byMinute ? 'minute' : 'hour', e.ts);
    let slot = this.lastSlot;
    if (slot === undefined || bucket !== this.lastBucket || e.site !== this.lastSite) {
      const slots = byMinute ? this.minutes : this.hours;
      let bySite = slots.get(e.site);
      if (!bySite) slots.set(e.site, (bySite = new Map<number, Slot>()));
      slot = bySite.get(bucket);
      if (!slot)
        bySite.set(
          bucket,
          (slot = { all: emptyDelta(e.site, bucket, ALL_ROUTES, null), routes: new Map<string, RollupDelta>() }),
        );
      this.lastSlot = slot;
      this.lastBucket = bucket;
      this.lastSite = e.site;
    }
    const latencyBucket = bucketIndex(LATENCY_HISTOGRAM, e.latencyMs);
    add(slot.all, e, c, latencyBucket);
    const rk = routeKey(e.route);
    let one = slot.routes.get(rk);
    if (!one) slot.routes.set(rk, (one = emptyDelta(e.site, bucket, rk, e.route)));
    add(one, e, c, latencyBucket);
    if (
      c.outcome === 'ok' &&
      e.pageType !== undefined &&
      !e.canary &&
      e.status !== undefined &&
      e.status >= 200 &&
      e.status < 300
    )
      this.addNorm(e, e.pageType);
  }

  /**
   * Norms: what a normal response of a page type looks like. Only responses classified ok with a
   * 2xx status count, so soft blocks never become the norm they are measured against.
   */
  private addNorm(e: RequestOutcomeEvent, pageType: string): void {
    const day = bucketStart('day', e.ts);
    let byType = this.norms.get(e.site);
    if (!byType) this.norms.set(e.site, (byType = new Map<string, Map<number, NormDelta>>()));
    let byDay = byType.get(pageType);
    if (!byDay) byType.set(pageType, (byDay = new Map<number, NormDelta>()));
    let d = byDay.get(day);
    if (!d) {
      d = {
        site: e.site,
        pageType,
        day,
        responses: 0,
        withRecords: 0,
        extractions: 0,
        bytesHist: emptyHistogram(BYTES_HISTOGRAM),
      };
      byDay.set(day, d);
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

  /**
   * The norm rows aggregated so far for a site, per page type and UTC day (not folded by the cardinality
   * cap): ingest classifies a batch's later days against them. Live views, not copies.
   */
  normRows(site: string): ReadonlyMap<string, ReadonlyMap<number, NormDelta>> | undefined {
    return this.norms.get(site);
  }

  /** The route keys of the batch per site and UTC day (for the cardinality cap). */
  routeKeysByDay(): Map<string, DayKeys> {
    const out = new Map<string, DayKeys>();
    for (const [site, bySite] of [...this.minutes, ...this.hours]) {
      for (const [bucket, slot] of bySite) {
        const day = bucketStart('day', bucket);
        const id = `${site}\u0000${day}`;
        let entry = out.get(id);
        if (!entry) out.set(id, (entry = { site, day, keys: new Set<string>() }));
        for (const key of slot.routes.keys()) entry.keys.add(key);
      }
    }
    return out;
  }

  /** The page types of the batch's norm deltas per site and UTC day (for the cardinality cap). */
  pageTypesByDay(): Map<string, DayKeys> {
    const out = new Map<string, DayKeys>();
    for (const [site, byType] of this.norms) {
      for (const [pageType, byDay] of byType) {
        for (const day of byDay.keys()) {
          const id = `${site}\u0000${day}`;
          let entry = out.get(id);
          if (!entry) out.set(id, (entry = { site, day, keys: new Set<string>() }));
          entry.keys.add(pageType);
        }
      }
    }
    return out;
  }

  /**
   * Rollup deltas for every level, sorted by key (a stable lock order for concurrent ingesters). Routes
   * that `keep` refuses are merged into the site's {@link OTHER_ROUTES} row of the same bucket.
   */
  rollups(keep?: KeepKey): Record<RollupLevel, RollupDelta[]> {
    const minute = slotDeltas(this.minutes, keep).sort(compareDeltas);
    // Hour deltas: merged from the minute ones, and the hour slots of older days as they are (the two
    // never share a (site, hour): a day either keeps minute rows or not). Day deltas from hours.
    const hour = coarser('hour', minute);
    if (this.hours.size > 0) {
      hour.push(...slotDeltas(this.hours, keep));
      hour.sort(compareDeltas);
    }
    return { minute, hour, day: coarser('day', hour) };
  }

  /** Norm deltas sorted by key; page types that `keep` refuses are merged into {@link OTHER_PAGE_TYPE}. */
  normDeltas(keep?: KeepKey): NormDelta[] {
    const list: NormDelta[] = [];
    const other = new Map<string, NormDelta>();
    for (const byType of this.norms.values()) {
      for (const byDay of byType.values()) {
        for (const d of byDay.values()) {
          if (keep === undefined || keep(d.site, d.day, d.pageType)) {
            list.push(d);
            continue;
          }
          const id = `${d.site}\u0000${d.day}`;
          const into = other.get(id);
          if (into) mergeNorm(into, d);
          else other.set(id, { ...d, pageType: OTHER_PAGE_TYPE, bytesHist: [...d.bytesHist] });
        }
      }
    }
    list.push(...other.values());
    return list.sort(compareNorms);
  }
}

/** The deltas of a set of slots, unsorted; routes that `keep` refuses merged into the site's other row. */
function slotDeltas(slots: ReadonlyMap<string, ReadonlyMap<number, Slot>>, keep: KeepKey | undefined): RollupDelta[] {
  const out: RollupDelta[] = [];
  for (const bySite of slots.values()) {
    for (const slot of bySite.values()) {
      out.push(slot.all);
      let other: RollupDelta | undefined;
      const day = keep ? bucketStart('day', slot.all.bucket) : 0;
      for (const d of slot.routes.values()) {
        if (keep === undefined || keep(d.site, day, d.routeKey)) {
          out.push(d);
        } else if (other === undefined) {
          other = { ...d, routeKey: OTHER_ROUTES, country: OTHER_LABEL, pool: OTHER_LABEL, session: OTHER_LABEL };
          out.push(other);
        } else {
          mergeDelta(other, d);
        }
      }
    }
  }
  return out;
}

/**
 * The deltas of a coarser level from finer ones sorted by (site, bucket): every (site, coarser bucket)
 * is one contiguous run of them, merged by route key without building a key string per delta.
 */
function coarser(level: RollupLevel, finer: readonly RollupDelta[]): RollupDelta[] {
  const out: RollupDelta[] = [];
  const run = new Map<string, RollupDelta>();
  let site = '';
  let bucket = NaN;
  for (const d of finer) {
    const b = bucketStart(level, d.bucket);
    if (b !== bucket || d.site !== site) {
      for (const merged of run.values()) out.push(merged);
      run.clear();
      site = d.site;
      bucket = b;
    }
    const into = run.get(d.routeKey);
    if (into) mergeDelta(into, d);
    else run.set(d.routeKey, { ...d, bucket: b, latencyHist: d.latencyHist ? d.latencyHist.slice() : null });
  }
  for (const merged of run.values()) out.push(merged);
  return out.sort(compareDeltas);
}

/** Every additive field of a delta, one by one (a loop over field names was slower): runs per minute delta. */
function mergeDelta(into: RollupDelta, d: RollupDelta): void {
  into.requests += d.requests;
  into.ok += d.ok;
  into.hardBlocks += d.hardBlocks;
  into.challenges += d.challenges;
  into.softBlocks += d.softBlocks;
  into.errors += d.errors;
  into.extractionOk += d.extractionOk;
  into.extractionMissing += d.extractionMissing;
  into.extractionSchema += d.extractionSchema;
  into.extractionEmpty += d.extractionEmpty;
  into.validRecords += d.validRecords;
  into.retries += d.retries;
  into.bytes += d.bytes;
  into.credits += d.credits;
  into.canaryRuns += d.canaryRuns;
  into.canaryFailures += d.canaryFailures;
  const from = d.latencyHist;
  const to = into.latencyHist;
  if (to && from) for (let i = 0; i < from.length; i++) if (from[i] !== 0) countInto(to, i, from[i]!);
}

function mergeNorm(into: NormDelta, d: NormDelta): void {
  into.responses += d.responses;
  into.withRecords += d.withRecords;
  into.extractions += d.extractions;
  for (let i = 0; i < d.bytesHist.length; i++) into.bytesHist[i] = (into.bytesHist[i] ?? 0) + d.bytesHist[i]!;
}

function compareDeltas(a: RollupDelta, b: RollupDelta): number {
  return a.site < b.site
    ? -1
    : a.site > b.site
      ? 1
      : a.bucket - b.bucket || (a.routeKey < b.routeKey ? -1 : a.routeKey > b.routeKey ? 1 : 0);
}

function compareNorms(a: NormDelta, b: NormDelta): number {
  return a.site < b.site
    ? -1
    : a.site > b.site
      ? 1
      : a.pageType < b.pageType
        ? -1
        : a.pageType > b.pageType
          ? 1
          : a.day - b.day;
}
