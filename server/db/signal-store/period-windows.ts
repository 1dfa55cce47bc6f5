/**
 * A period's current windows from one read: the minute rollups of the whole period read and checked once
 * (period-rows.ts), and each tick's current and recent window kept as running sums — the minutes entering
 * added, the ones leaving subtracted — with the same answers as the per-tick statement (read-windows.ts
 * `readCurrentWindow`): the same routes, counts, p95, credits and order, in the scoring engine's types.
 * For replays (tools/replay/engine.ts), which walk thousands of ticks over rows that no longer change; the
 * live loop keeps reading each tick's window from PostgreSQL.
 *
 * Exactness: counts and histogram buckets are non-negative integers whose period sums the read checked to
 * stay below 2^52, so adding and subtracting them is exact in any order and a running sum equals a fresh
 * one. Credits (double precision) are not slid: each window's are added afresh in minute order, as the
 * statement's index scan adds them.
 *
 * The windows are built as `makeWindow` would return them (key order included), without parsing again:
 * the rows were validated at the read, and every sum of them is a valid count.
 */
import type { RecentWindow, RouteWindow, Window } from '../../../core/scoring/window';
import { LATENCY_HISTOGRAM, quantile } from '../../../core/signals/histogram';
import type { Pool } from '../pool';
import { type PeriodRows, ROUTE_COUNTS, TOTAL_COUNTS, readPeriodRows } from './period-rows';

const RC = ROUTE_COUNTS.length;
const TC = TOTAL_COUNTS.length;

export interface PeriodWindows {
  /** The current window in [from, to) with the recent one from `recentFrom`; null when outside the period read. */
  current(bounds: { from: Date; to: Date }, recentFrom: Date): (Window & { recent: RecentWindow }) | null;
  /** The rows read. */
  rows: number;
}

/** Sums of a range of rows, per route, moved range to range by adding and subtracting rows. */
class RunningSums {
  private lo = 0;
  private hi = 0;
  /** RC counts per route. */
  readonly counts: Float64Array;
  /** Rows per route in the range (a route with a row of zeros is still in the window, as in the statement). */
  readonly present: Int32Array;
  /** The all-routes rows' other counts and histogram (when `totals`). */
  readonly totals = new Float64Array(TC);
  readonly hist: number[];

  constructor(
    private readonly rows: PeriodRows,
    private readonly withTotals: boolean,
  ) {
    this.counts = new Float64Array(rows.routes.length * RC);
    this.present = new Int32Array(rows.routes.length);
    this.hist = Array.from({ length: withTotals ? rows.histLength : 0 }, () => 0);
  }

  moveTo(lo: number, hi: number): void {
    // Sliding costs the rows that changed; a jump (or a first window) costs the new range.
    if (Math.abs(lo - this.lo) + Math.abs(hi - this.hi) >= hi - lo) {
      this.counts.fill(0);
      this.present.fill(0);
      this.totals.fill(0);
      this.hist.fill(0);
      this.add(lo, hi, 1);
    } else {
      // Entering rows first: no sum goes below zero on the way (exact either way, see the header).
      if (hi > this.hi) this.add(this.hi, hi, 1);
      if (lo < this.lo) this.add(lo, this.lo, 1);
      if (hi < this.hi) this.add(hi, this.hi, -1);
      if (lo > this.lo) this.add(this.lo, lo, -1);
    }
    this.lo = lo;
    this.hi = hi;
  }

  private add(from: number, to: number, sign: 1 | -1): void {
    const { route, counts, totals, hist, all } = this.rows;
    for (let i = from; i < to; i++) {
      const r = route[i]!;
      this.present[r]! += sign;
      for (let k = 0; k < RC; k++) this.counts[r * RC + k]! += sign * counts[i * RC + k]!;
      if (r !== all || !this.withTotals) continue;
      for (let k = 0; k < TC; k++) this.totals[k]! += sign * totals[i * TC + k]!;
      const h = hist[i];
      if (h) for (let k = 0; k < h.length; k++) this.hist[k]! += sign * h[k]!;
    }
  }
}

/** The first row at or after `t` (rows are in time order). */
function firstAt(t: Float64Array, length: number, at: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t[mid]! < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A route's window as read-windows.ts `toRoute` makes it: labels first (empty ones left out), then the counts.
 * Routes with all three labels (the common case) are made by one object literal: one shape, allocated at once —
 * a replay makes tens of thousands of them.
 */
function routeWindow(r: PeriodRows['routes'][number], c: Float64Array, o: number): RouteWindow {
  if (r.country && r.pool && r.session)
    return {
      country: r.country,
      pool: r.pool,
      sessionPattern: r.session,
      requests: c[o]!,
      hardBlocks: c[o + 1]!,
      challenges: c[o + 2]!,
      softBlocks: c[o + 3]!,
      errors: c[o + 4]!,
    };
  const w = {} as RouteWindow;
  if (r.country) w.country = r.country;
  if (r.pool) w.pool = r.pool;
  if (r.session) w.sessionPattern = r.session;
  w.requests = c[o]!;
  w.hardBlocks = c[o + 1]!;
  w.challenges = c[o + 2]!;
  w.softBlocks = c[o + 3]!;
  w.errors = c[o + 4]!;
  return w;
}

/** The windows of a period's rows (pure: the read is period-rows.ts). */
export function periodWindows(rows: PeriodRows, from: number, to: number): PeriodWindows {
  const routes = rows.routes.map((r, index) => ({
    index,
    // read-windows.ts `busiestFirst`'s tie-break, computed once.
    label: `${r.country || ''}|${r.pool || ''}|${r.session || ''}`,
  }));
  const others = routes.filter((r) => r.index !== rows.all);
  const current = new RunningSums(rows, true);
  const recent = new RunningSums(rows, false);
  const at = (s: RunningSums, r: number, k: number): number => s.counts[r * RC + k]!;

  /** Route windows of `s`, busiest first then by labels (as the statement's windowOf orders them). */
  const routesOf = (s: RunningSums, keep: (r: number) => boolean): RouteWindow[] =>
    others
      .filter((r) => keep(r.index))
      .sort((a, b) => at(s, b.index, 0) - at(s, a.index, 0) || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
      .map((r) => routeWindow(rows.routes[r.index]!, s.counts, r.index * RC));

  return {
    rows: rows.length,
    current(bounds, recentFrom) {
      const a = bounds.from.getTime();
      const b = bounds.to.getTime();
      if (a < from || b > to) return null;
      const lo = firstAt(rows.t, rows.length, a);
      const hi = firstAt(rows.t, rows.length, b);
      current.moveTo(lo, hi);
      recent.moveTo(Math.min(hi, Math.max(lo, firstAt(rows.t, rows.length, recentFrom.getTime()))), hi);

      const all = rows.all;
      const total = all >= 0 && current.present[all]! > 0;
      const count = (s: RunningSums, k: number): number => (total ? at(s, all, k) : 0);
      let credits = 0;
      if (total) for (let i = lo; i < hi; i++) if (rows.route[i] === all) credits += rows.credits[i]!;
      const p95 = total ? (quantile(LATENCY_HISTOGRAM, current.hist, 0.95) ?? 0) : 0;
      const t = current.totals;
      return {
        requests: count(current, 0),
        hardBlocks: count(current, 1),
        challenges: count(current, 2),
        softBlocks: count(current, 3),
        p95LatencyMs: p95,
        extractionOk: total ? t[0]! : 0,
        extractionMissingFields: total ? t[1]! : 0,
        extractionSchemaMismatch: total ? t[2]! : 0,
        extractionEmpty: total ? t[3]! : 0,
        validRecords: total ? t[4]! : 0,
        retries: total ? t[5]! : 0,
        bytes: total ? t[6]! : 0,
        credits,
        canary: { runs: total ? t[7]! : 0, failures: total ? t[8]! : 0, mismatches: 0 },
        routes: routesOf(current, (r) => current.present[r]! > 0),
        recent: {
          requests: count(recent, 0),
          hardBlocks: count(recent, 1),
          challenges: count(recent, 2),
          softBlocks: count(recent, 3),
          routes: routesOf(recent, (r) => at(recent, r, 0) > 0),
        },
      };
    },
  };
}

/** The minute rollups of `site` in [from, to), once; null when the read refuses them (period-rows.ts). */
export async function loadPeriodWindows(pool: Pool, site: string, from: Date, to: Date): Promise<PeriodWindows | null> {
  const rows = await readPeriodRows(pool, site, from, to);
  return rows === null ? null : periodWindows(rows, from.getTime(), to.getTime());
}
