/**
 * A period's current windows from one read: the minute rollups of the whole period fetched once, and each
 * tick's current and recent window summed from them in memory — the same rows, the same sums, the same
 * conversion (read-windows.ts `windowOf`, `recentOf`) as the per-tick statement, without a statement per tick.
 * For replays (tools/replay/engine.ts), which walk thousands of ticks over rows that no longer change; the live
 * loop keeps reading each tick's window from PostgreSQL.
 *
 * Exactness: counts are integers summed in order below 2^53 (the per-tick statement's numeric sums, read back
 * saturated at 2^53 − 1, agree there); a period whose rows could sum past that is refused (`null`: read per
 * tick). Credits (double precision) are added in bucket order, as the statement's index scan adds them.
 */
import type { RecentWindow, Window } from '../../../core/scoring/window';
import type { Pool } from '../pool';
import { ALL_ROUTES } from './aggregate';
import { type WindowRow, recentOf, windowOf } from './read-windows';

/** Counts summed per route, in the statement's column order. */
const COUNTS = [
  'requests',
  'hard_blocks',
  'challenges',
  'soft_blocks',
  'errors',
  'extraction_ok',
  'extraction_missing',
  'extraction_schema',
  'extraction_empty',
  'valid_records',
  'retries',
  'bytes',
  'canary_runs',
  'canary_failures',
] as const;
type Count = (typeof COUNTS)[number];
const RECENT = ['requests', 'hard_blocks', 'challenges', 'soft_blocks', 'errors'] as const;

interface MinuteRow {
  t: number;
  routeKey: string;
  country: string | null;
  pool: string | null;
  session: string | null;
  counts: number[];
  credits: number;
  hist: number[] | null;
}

/** Above this a period's sums could leave the exact integers: the per-tick statement reads it instead. */
const SAFE_TOTAL = Number.MAX_SAFE_INTEGER / 2;

export interface PeriodWindows {
  /** The current window in [from, to) with the recent one from `recentFrom`; null when outside the period read. */
  current(bounds: { from: Date; to: Date }, recentFrom: Date): (Window & { recent: RecentWindow }) | null;
  /** The rows read. */
  rows: number;
}

/** The minute rollups of `site` in [from, to), once; null when their sums could pass the exact integers. */
export async function loadPeriodWindows(pool: Pool, site: string, from: Date, to: Date): Promise<PeriodWindows | null> {
  const { rows } = await pool.query<
    Record<Count, string> &
      Pick<WindowRow, 'route_key' | 'country' | 'pool' | 'session' | 'credits'> & {
        t: Date;
        /** `{1,0,3}`: the minute's histogram as text (parsed here, cheaper than pg's array parser). */
        latency_hist: string | null;
      }
  >(
    // The columns COUNTS names, written out (the statement is reviewed as it stands: no interpolation).
    `SELECT bucket AS t, route_key, country, pool, session, requests, hard_blocks, challenges, soft_blocks, errors,
            extraction_ok, extraction_missing, extraction_schema, extraction_empty, valid_records, retries, bytes,
            canary_runs, canary_failures, credits, latency_hist::text
       FROM rollup_minute WHERE site = $1 AND bucket >= $2 AND bucket < $3
      ORDER BY bucket, route_key`,
    [site, from, to],
  );
  const minutes: MinuteRow[] = [];
  const totals = new Array<number>(COUNTS.length).fill(0);
  for (const r of rows) {
    const counts = COUNTS.map((c) => Number(r[c]));
    counts.forEach((n, i) => (totals[i]! += n));
    const hist = r.latency_hist;
    minutes.push({
      t: r.t.getTime(),
      routeKey: r.route_key,
      country: r.country,
      pool: r.pool,
      session: r.session,
      counts,
      credits: Number(r.credits),
      hist:
        hist === null
          ? null
          : hist
              .replace(/^\{|\}$/g, '')
              .split(',')
              .map(Number),
    });
  }
  if (totals.some((n) => !(n < SAFE_TOTAL))) return null;
  const lo = from.getTime();
  const hi = to.getTime();
  return {
    rows: minutes.length,
    current(bounds, recentFrom) {
      const a = bounds.from.getTime();
      const b = bounds.to.getTime();
      if (a < lo || b > hi) return null;
      return sumWindow(minutes, a, b, recentFrom.getTime());
    },
  };
}

/** The first index whose minute is at or after `t` (rows are in time order). */
function firstAt(rows: readonly MinuteRow[], t: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.t < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Acc {
  first: MinuteRow;
  counts: number[];
  recent: number[];
  credits: number;
  hist: number[] | null;
}

function sumWindow(
  rows: readonly MinuteRow[],
  from: number,
  to: number,
  recentFrom: number,
): Window & { recent: RecentWindow } {
  const byRoute = new Map<string, Acc>();
  for (let i = firstAt(rows, from); i < rows.length && rows[i]!.t < to; i += 1) {
    const r = rows[i]!;
    let acc = byRoute.get(r.routeKey);
    if (acc === undefined) {
      acc = {
        first: r,
        counts: new Array<number>(COUNTS.length).fill(0),
        recent: [0, 0, 0, 0, 0],
        credits: 0,
        hist: null,
      };
      byRoute.set(r.routeKey, acc);
    }
    for (let k = 0; k < COUNTS.length; k += 1) acc.counts[k]! += r.counts[k]!;
    // The recent counts are the first five columns (requests … errors), as RECENT lists them.
    if (r.t >= recentFrom) for (let k = 0; k < RECENT.length; k += 1) acc.recent[k]! += r.counts[k]!;
    acc.credits += r.credits;
    if (r.routeKey === ALL_ROUTES && r.hist !== null) {
      const h = (acc.hist ??= []);
      r.hist.forEach((x, k) => (h[k] = (h[k] ?? 0) + x));
    }
  }
  const out: WindowRow[] = [];
  for (const [routeKey, acc] of byRoute) {
    const row = {
      route_key: routeKey,
      country: acc.first.country,
      pool: acc.first.pool,
      session: acc.first.session,
      credits: acc.credits,
      latency_hist: acc.hist === null ? null : acc.hist.map(String),
      recent_requests: String(acc.recent[0]),
      recent_hard_blocks: String(acc.recent[1]),
      recent_challenges: String(acc.recent[2]),
      recent_soft_blocks: String(acc.recent[3]),
      recent_errors: String(acc.recent[4]),
    } as WindowRow;
    COUNTS.forEach((c, k) => (row[c] = String(acc.counts[k])));
    out.push(row);
  }
  return { ...windowOf(out), recent: recentOf(out) };
}
