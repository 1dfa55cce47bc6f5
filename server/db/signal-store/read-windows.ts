/**
 * The tick's read: a site's current window and its baseline, per site and per route, in the scoring
 * engine's types — from rollups only, so the cost depends on the window lengths, not on traffic.
 *
 * Bounds (half-open):
 * - current  = [asOf − currentWindowMs, asOf) over whole minutes that have fully passed: the minute
 *              holding `asOf` is left out, so a tick never sees events stamped after its time (no
 *              look-ahead in a replay) nor a partial minute (live, the crawler is still sending it).
 *              With a gate (`notBefore`, a resume's time) it starts no earlier than the first whole
 *              minute from the gate: a partial minute before a person's decision is never judged;
 * - recent   = the last `recentWindowMs` (5 min) of the current window, refusal counts only (read in
 *              the same statement: the refusal rules' fast window);
 * - baseline = [H − excludeRecent − baseline, H − excludeRecent) with H = `asOf` floored to the hour:
 *              14 days that end one day ago by default. Whole UTC days in it are read from day
 *              rollups, the ragged ends from hour rollups.
 *
 * Sums never overflow and never round: PostgreSQL sums the bigint columns as numeric and the latency
 * histograms bucket by bucket as bigint (exact), and each total is read as a number saturated at
 * 2^53 - 1 (Number.MAX_SAFE_INTEGER), the largest count a window holds exactly. Only hostile or corrupt
 * data gets near it (a few thousand events each claiming the largest body the store accepts); it must
 * not stop the site's loop, and a cost ratio computed from a saturated sum is still "far above normal".
 */
import { makeWindow, type RecentWindow, type RouteWindow, type Window } from '../../../core/scoring/window';
import { LATENCY_HISTOGRAM, quantile } from '../../../core/signals/histogram';
import type { Pool } from '../pool';
import { ALL_ROUTES } from './aggregate';
import type { SiteWindows, WindowSpec } from './types';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const DEFAULT_RECENT_MS = 5 * MINUTE;

const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;
const ceilTo = (t: number, unit: number): number => Math.ceil(t / unit) * unit;

export function windowBounds(spec: WindowSpec): SiteWindows['bounds'] {
  const asOf = spec.asOf.getTime();
  const currentTo = floorTo(asOf, MINUTE);
  const gate =
    spec.notBefore === null || spec.notBefore === undefined ? -Infinity : ceilTo(spec.notBefore.getTime(), MINUTE);
  // An empty window (from = to) when the gate is this minute or later: nothing after it has passed yet.
  const currentFrom = Math.min(currentTo, Math.max(currentTo - ceilTo(spec.currentWindowMs, MINUTE), gate));
  const recentFrom = Math.max(currentFrom, currentTo - ceilTo(spec.recentWindowMs ?? DEFAULT_RECENT_MS, MINUTE));
  const baselineTo = floorTo(asOf, HOUR) - ceilTo(spec.excludeRecentMs, HOUR);
  const baselineFrom = baselineTo - ceilTo(spec.baselineMs, HOUR);
  return {
    current: { from: new Date(currentFrom), to: new Date(currentTo) },
    recent: { from: new Date(recentFrom), to: new Date(currentTo) },
    baseline: { from: new Date(baselineFrom), to: new Date(baselineTo) },
  };
}

/** Sums arrive as text (numeric, bigint[]): exact, whatever their size. */
export interface WindowRow {
  route_key: string;
  country: string | null;
  pool: string | null;
  session: string | null;
  requests: string;
  hard_blocks: string;
  challenges: string;
  soft_blocks: string;
  errors: string;
  extraction_ok: string;
  extraction_missing: string;
  extraction_schema: string;
  extraction_empty: string;
  valid_records: string;
  retries: string;
  bytes: string;
  credits: number;
  canary_runs: string;
  canary_failures: string;
  latency_hist: string[] | null;
  /** Current window only: the all-routes row's minute histograms, `{1,0,3};{0,2}` (see CURRENT_SQL). */
  minute_hists?: string | null;
  /** Current window only: the recent window's refusal counts. */
  recent_requests?: string | null;
  recent_hard_blocks?: string | null;
  recent_challenges?: string | null;
  recent_soft_blocks?: string | null;
  recent_errors?: string | null;
}

/** Minute histograms as `{1,0,3};{0,2}` added bucket by bucket, each sum saturated at 2^53 - 1. */
export function sumMinuteHistograms(text: string): string[] {
  const sums: number[] = [];
  for (const part of text.split(';')) {
    const body = part.trim().replace(/^\{|\}$/g, '');
    if (body === '') continue;
    body.split(',').forEach((x, i) => {
      sums[i] = Math.min((sums[i] ?? 0) + Number(x), Number.MAX_SAFE_INTEGER);
    });
  }
  return sums.map((n) => String(n));
}

const SUMS = `sum(requests) AS requests, sum(hard_blocks) AS hard_blocks, sum(challenges) AS challenges,
  sum(soft_blocks) AS soft_blocks, sum(errors) AS errors, sum(extraction_ok) AS extraction_ok,
  sum(extraction_missing) AS extraction_missing, sum(extraction_schema) AS extraction_schema,
  sum(extraction_empty) AS extraction_empty, sum(valid_records) AS valid_records,
  sum(retries) AS retries, sum(bytes) AS bytes, sum(credits) AS credits, sum(canary_runs) AS canary_runs,
  sum(canary_failures) AS canary_failures`;

/**
 * The windows' statements: rollup rows of one window summed per route, and the all-routes rows'
 * latency histograms summed bucket by bucket as bigint (`th_hist_sum` adds integer arrays, which
 * overflow once a bucket passes 2^31 requests: a busy site's 14-day baseline). What they read is the
 * rows (`parts`): minute rollups for the current window; for the baseline, day rollups for whole UTC
 * days and hour rollups for the ends, leaving out the days listed in `excludeDays` (UTC dates, e.g.
 * days on which canaries failed).
 */
const WINDOW_SUMS = `
sums AS (
  SELECT route_key, min(country) AS country, min(pool) AS pool, min(session) AS session, ${SUMS}
  FROM parts GROUP BY route_key
),
hist AS (
  SELECT array_agg(n ORDER BY i) AS latency_hist
  FROM (
    SELECT h.i, sum(h.x) AS n
    FROM parts p CROSS JOIN LATERAL unnest(p.latency_hist) WITH ORDINALITY AS h(x, i)
    WHERE p.route_key = $2
    GROUP BY h.i
  ) buckets
)
SELECT s.*, hist.latency_hist FROM sums s LEFT JOIN hist ON s.route_key = $2`;

/**
 * The hour rollups of the two ragged ends are two ranges, not one 14-day range filtered: the index then reads
 * the ends' rows only (a baseline read took half the time: every live tick makes one, a replay one an hour).
 * The same rows, in the same order (day rows, then hour rows by time).
 */
const BASELINE_PARTS = `
  SELECT * FROM rollup_day WHERE site = $1 AND bucket >= $4 AND bucket < $5
    AND NOT ((bucket AT TIME ZONE 'UTC')::date = ANY($7::date[]))
  UNION ALL
  SELECT * FROM rollup_hour WHERE site = $1 AND bucket >= $3 AND bucket < $4
    AND NOT ((bucket AT TIME ZONE 'UTC')::date = ANY($7::date[]))
  UNION ALL
  SELECT * FROM rollup_hour WHERE site = $1 AND bucket >= $5 AND bucket < $6
    AND NOT ((bucket AT TIME ZONE 'UTC')::date = ANY($7::date[]))`;

/**
 * $1 site, $2 the all-routes key, $3–$4 the current window, $5 the recent window's start. A few minutes
 * of rows: the all-routes histograms come back as text, one per minute, and are added up here
 * (sumMinuteHistograms) — a third cheaper than summing them in SQL, and this read runs on every tick.
 */
const CURRENT_SQL = `
SELECT route_key, min(country) AS country, min(pool) AS pool, min(session) AS session, ${SUMS},
  CASE WHEN route_key = $2 THEN string_agg(latency_hist::text, ';') END AS minute_hists,
  sum(requests) FILTER (WHERE bucket >= $5) AS recent_requests,
  sum(hard_blocks) FILTER (WHERE bucket >= $5) AS recent_hard_blocks,
  sum(challenges) FILTER (WHERE bucket >= $5) AS recent_challenges,
  sum(soft_blocks) FILTER (WHERE bucket >= $5) AS recent_soft_blocks,
  sum(errors) FILTER (WHERE bucket >= $5) AS recent_errors
FROM rollup_minute WHERE site = $1 AND bucket >= $3 AND bucket < $4
GROUP BY route_key`;

/** $1 site, $2 the all-routes key, $3 baseline start, $4–$5 whole days, $6 baseline end, $7 excluded days. */
const BASELINE_SQL = `WITH parts AS (${BASELINE_PARTS}),${WINDOW_SUMS}`;

/** A summed count as a number: exact up to 2^53 - 1, saturated there (see the header). */
export function countFromSql(text: string | null | undefined): number {
  if (text === null || text === undefined) return 0;
  return Math.min(Number(text), Number.MAX_SAFE_INTEGER);
}

const label = (r: RouteWindow): string => `${r.country ?? ''}|${r.pool ?? ''}|${r.sessionPattern ?? ''}`;

/**
 * Routes busiest first, ties by their labels: the order does not depend on how PostgreSQL grouped the rows, so a
 * window summed in memory (period-windows.ts) lists its routes exactly as the statement's.
 */
function busiestFirst(a: RouteWindow, b: RouteWindow): number {
  if (a.requests !== b.requests) return b.requests - a.requests;
  const x = label(a);
  const y = label(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function toRoute(r: WindowRow): RouteWindow {
  return {
    ...(r.country ? { country: r.country } : {}),
    ...(r.pool ? { pool: r.pool } : {}),
    ...(r.session ? { sessionPattern: r.session } : {}),
    requests: countFromSql(r.requests),
    hardBlocks: countFromSql(r.hard_blocks),
    challenges: countFromSql(r.challenges),
    softBlocks: countFromSql(r.soft_blocks),
    errors: countFromSql(r.errors),
  };
}

function toWindow(total: WindowRow | undefined, routes: WindowRow[]): Window {
  const hist = total?.latency_hist?.map(countFromSql);
  const p95 = hist ? quantile(LATENCY_HISTOGRAM, hist, 0.95) : undefined;
  return makeWindow({
    requests: countFromSql(total?.requests),
    hardBlocks: countFromSql(total?.hard_blocks),
    challenges: countFromSql(total?.challenges),
    softBlocks: countFromSql(total?.soft_blocks),
    p95LatencyMs: p95 ?? 0,
    extractionOk: countFromSql(total?.extraction_ok),
    extractionMissingFields: countFromSql(total?.extraction_missing),
    extractionSchemaMismatch: countFromSql(total?.extraction_schema),
    extractionEmpty: countFromSql(total?.extraction_empty),
    validRecords: countFromSql(total?.valid_records),
    retries: countFromSql(total?.retries),
    bytes: countFromSql(total?.bytes),
    credits: total?.credits ?? 0,
    canary: { runs: countFromSql(total?.canary_runs), failures: countFromSql(total?.canary_failures), mismatches: 0 },
    routes: routes.map(toRoute).sort(busiestFirst),
  });
}

export function windowOf(rows: readonly WindowRow[]): Window {
  return toWindow(
    rows.find((r) => r.route_key === ALL_ROUTES),
    rows.filter((r) => r.route_key !== ALL_ROUTES),
  );
}

/** A row's recent-window counts, in the shape of the row's own (for toRoute). */
function recentRow(r: WindowRow): WindowRow {
  return {
    ...r,
    requests: r.recent_requests ?? '0',
    hard_blocks: r.recent_hard_blocks ?? '0',
    challenges: r.recent_challenges ?? '0',
    soft_blocks: r.recent_soft_blocks ?? '0',
    errors: r.recent_errors ?? '0',
  };
}

export function recentOf(rows: readonly WindowRow[]): RecentWindow {
  const total = rows.find((r) => r.route_key === ALL_ROUTES);
  const counts =
    total === undefined ? { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 } : toRoute(recentRow(total));
  const routes = rows
    .filter((r) => r.route_key !== ALL_ROUTES)
    .map((r) => toRoute(recentRow(r)))
    .filter((r) => r.requests > 0)
    .sort(busiestFirst);
  return {
    requests: counts.requests,
    hardBlocks: counts.hardBlocks,
    challenges: counts.challenges,
    softBlocks: counts.softBlocks,
    routes,
  };
}

/**
 * The current window: minute rollups in `bounds` (from windowBounds), with the recent window from
 * `recentFrom` (default: the whole current window) to the same end.
 */
export async function readCurrentWindow(
  pool: Pool,
  site: string,
  bounds: SiteWindows['bounds']['current'],
  recentFrom: Date = bounds.from,
): Promise<Window> {
  // Named: each connection plans it once (it runs every tick of every site, and every replayed tick).
  const { rows } = await pool.query<WindowRow>({
    name: 'th-current-window',
    text: CURRENT_SQL,
    values: [site, ALL_ROUTES, bounds.from, bounds.to, recentFrom],
  });
  const window = windowOf(
    rows.map((r) => (r.minute_hists ? { ...r, latency_hist: sumMinuteHistograms(r.minute_hists) } : r)),
  );
  return { ...window, recent: recentOf(rows) };
}

/** The baseline window in `bounds` (from windowBounds), or null when the site had no traffic in it. */
export async function readBaselineWindow(
  pool: Pool,
  site: string,
  bounds: SiteWindows['bounds']['baseline'],
  excludeDays: readonly string[] = [],
): Promise<Window | null> {
  const b0 = bounds.from.getTime();
  const b1 = bounds.to.getTime();
  // Whole UTC days inside the baseline; if there are none, hour rollups cover it all.
  let dayFrom = ceilTo(b0, DAY);
  let dayTo = floorTo(b1, DAY);
  if (dayTo <= dayFrom) dayFrom = dayTo = b1;
  const { rows } = await pool.query<WindowRow>({
    name: 'th-baseline-window',
    text: BASELINE_SQL,
    values: [site, ALL_ROUTES, bounds.from, new Date(dayFrom), new Date(dayTo), bounds.to, excludeDays],
  });
  const baseline = windowOf(rows);
  return baseline.requests > 0 ? baseline : null;
}

/**
 * Both windows of a tick. Two statements, run together: the baseline moves once an hour, so a replay
 * can keep it while the current window slides (tools/replay/engine.ts); live, they cost what one did.
 */
export async function readSiteWindows(
  pool: Pool,
  site: string,
  spec: WindowSpec & { excludeDays?: readonly string[] },
  readBaseline: typeof readBaselineWindow = readBaselineWindow,
): Promise<SiteWindows> {
  const bounds = windowBounds(spec);
  const [current, baseline] = await Promise.all([
    readCurrentWindow(pool, site, bounds.current, bounds.recent.from),
    readBaseline(pool, site, bounds.baseline, spec.excludeDays ?? []),
  ]);
  return { site, current, baseline, bounds };
}
