/**
 * The tick's read: a site's current window and its baseline, per site and per route, in the scoring
 * engine's types — from rollups only, so the cost depends on the window lengths, not on traffic.
 *
 * Bounds (half-open):
 * - current  = the last `currentWindowMs` of minute buckets up to and including the minute holding
 *              `asOf` (so the newest events count at once);
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
import { makeWindow, type RouteWindow, type Window } from '../../scoring/window';
import { LATENCY_HISTOGRAM, quantile } from '../../signals/histogram';
import type { Pool } from '../pool';
import { ALL_ROUTES } from './aggregate';
import type { SiteWindows, WindowSpec } from './types';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;
const ceilTo = (t: number, unit: number): number => Math.ceil(t / unit) * unit;

export function windowBounds(spec: WindowSpec): SiteWindows['bounds'] {
  const asOf = spec.asOf.getTime();
  const currentTo = floorTo(asOf, MINUTE) + MINUTE;
  const currentFrom = currentTo - ceilTo(spec.currentWindowMs, MINUTE);
  const baselineTo = floorTo(asOf, HOUR) - ceilTo(spec.excludeRecentMs, HOUR);
  const baselineFrom = baselineTo - ceilTo(spec.baselineMs, HOUR);
  return {
    current: { from: new Date(currentFrom), to: new Date(currentTo) },
    baseline: { from: new Date(baselineFrom), to: new Date(baselineTo) },
  };
}

/** Sums arrive as text (numeric, bigint[]): exact, whatever their size. */
interface Row {
  w: 'current' | 'baseline';
  route_key: string;
  country: string | null;
  pool: string | null;
  session: string | null;
  requests: string;
  hard_blocks: string;
  challenges: string;
  soft_blocks: string;
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
}

const SUMS = `sum(requests) AS requests, sum(hard_blocks) AS hard_blocks, sum(challenges) AS challenges,
  sum(soft_blocks) AS soft_blocks, sum(extraction_ok) AS extraction_ok, sum(extraction_missing) AS extraction_missing,
  sum(extraction_schema) AS extraction_schema, sum(extraction_empty) AS extraction_empty, sum(valid_records) AS valid_records,
  sum(retries) AS retries, sum(bytes) AS bytes, sum(credits) AS credits, sum(canary_runs) AS canary_runs,
  sum(canary_failures) AS canary_failures`;

/**
 * One statement: the three rollup levels unioned and summed per window and route. The day rollups
 * cover whole UTC days inside the baseline; hour rollups cover the ends. Days listed in
 * `excludeDays` (UTC dates, e.g. days on which canaries failed) are left out of the baseline.
 * The all-routes rows' latency histograms are summed bucket by bucket as bigint (`th_hist_sum` adds
 * integer arrays, which overflow once a bucket passes 2^31 requests: a busy site's 14-day baseline).
 */
const READ_SQL = `
WITH parts AS (
  SELECT 'current' AS w, * FROM rollup_minute WHERE site = $1 AND bucket >= $2 AND bucket < $3
  UNION ALL
  SELECT 'baseline', * FROM rollup_day WHERE site = $1 AND bucket >= $5 AND bucket < $6
    AND NOT ((bucket AT TIME ZONE 'UTC')::date = ANY($8::date[]))
  UNION ALL
  SELECT 'baseline', * FROM rollup_hour WHERE site = $1 AND bucket >= $4 AND bucket < $7
    AND (bucket < $5 OR bucket >= $6)
    AND NOT ((bucket AT TIME ZONE 'UTC')::date = ANY($8::date[]))
),
sums AS (
  SELECT w, route_key, min(country) AS country, min(pool) AS pool, min(session) AS session, ${SUMS}
  FROM parts GROUP BY w, route_key
),
hist AS (
  SELECT w, array_agg(n ORDER BY i) AS latency_hist
  FROM (
    SELECT p.w, h.i, sum(h.x) AS n
    FROM parts p CROSS JOIN LATERAL unnest(p.latency_hist) WITH ORDINALITY AS h(x, i)
    WHERE p.route_key = $9
    GROUP BY p.w, h.i
  ) buckets
  GROUP BY w
)
SELECT s.*, hist.latency_hist FROM sums s LEFT JOIN hist ON hist.w = s.w AND s.route_key = $9`;

/** A summed count as a number: exact up to 2^53 - 1, saturated there (see the header). */
export function countFromSql(text: string | null | undefined): number {
  if (text === null || text === undefined) return 0;
  return Math.min(Number(text), Number.MAX_SAFE_INTEGER);
}

function toRoute(r: Row): RouteWindow {
  return {
    ...(r.country ? { country: r.country } : {}),
    ...(r.pool ? { pool: r.pool } : {}),
    ...(r.session ? { sessionPattern: r.session } : {}),
    requests: countFromSql(r.requests),
    hardBlocks: countFromSql(r.hard_blocks),
    challenges: countFromSql(r.challenges),
    softBlocks: countFromSql(r.soft_blocks),
  };
}

function toWindow(total: Row | undefined, routes: Row[]): Window {
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
    routes: routes.map(toRoute).sort((a, b) => b.requests - a.requests),
  });
}

export async function readSiteWindows(pool: Pool, site: string, spec: WindowSpec & { excludeDays?: readonly string[] }): Promise<SiteWindows> {
  const bounds = windowBounds(spec);
  const b0 = bounds.baseline.from.getTime();
  const b1 = bounds.baseline.to.getTime();
  // Whole UTC days inside the baseline; if there are none, hour rollups cover it all.
  let dayFrom = ceilTo(b0, DAY);
  let dayTo = floorTo(b1, DAY);
  if (dayTo <= dayFrom) dayFrom = dayTo = b1;
  const { rows } = await pool.query<Row>(READ_SQL, [
    site,
    bounds.current.from,
    bounds.current.to,
    bounds.baseline.from,
    new Date(dayFrom),
    new Date(dayTo),
    bounds.baseline.to,
    spec.excludeDays ?? [],
    ALL_ROUTES,
  ]);
  const pick = (w: Row['w']) => ({
    total: rows.find((r) => r.w === w && r.route_key === ALL_ROUTES),
    routes: rows.filter((r) => r.w === w && r.route_key !== ALL_ROUTES),
  });
  const current = pick('current');
  const baseline = pick('baseline');
  const baselineWindow = toWindow(baseline.total, baseline.routes);
  return {
    site,
    current: toWindow(current.total, current.routes),
    baseline: baselineWindow.requests > 0 ? baselineWindow : null,
    bounds,
  };
}
