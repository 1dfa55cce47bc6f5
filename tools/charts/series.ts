/**
 * The pure shaping of what the store holds into what a chart plots: the smoothed score recomputed over
 * the raw scores and bucketed, the daily normal of each signal, the band per period, requests and errors per
 * minute. No I/O.
 */
import type { HealthBand } from '../../core/common/names';
import { smoothScore, INITIAL_SMOOTHED_SCORE, type SmoothedScore } from '../../core/scoring/smoothing';
import { LATENCY_HISTOGRAM, quantile } from '../../core/signals/histogram';
import { floorTo } from './resolution';
import type {
  BandChange,
  BandPeriod,
  DayBaseline,
  RateBucket,
  Resolution,
  RollupLevel,
  ScoreBucket,
  ScoreTick,
  TrafficBucket,
} from './types';

const MINUTE = 60_000;
const DAY = 86_400_000;
const LEVEL_MS: Record<RollupLevel, number> = { minute: MINUTE, hour: 3_600_000, day: DAY };
/** The loop's baseline: 14 whole days ending one day before the tick (docs/signal-store.md). */
export const BASELINE_DAYS = 14;
export const BASELINE_GAP_DAYS = 1;

/**
 * Buckets the ticks of [from, to). The smoothed score is the one stored with each tick (what the loop judged
 * its band on). For ticks stored before it was, it is recomputed: the time-aware EWMA of
 * core/scoring/smoothing.ts with the site's half-life, carried through every tick and started on the ticks
 * before `from` the caller read (a few half-lives, so the first bucket is not a cold start) — an estimate, as
 * it knows nothing of resumes or route holds. Ticks must be in time order.
 */
export function scoreBuckets(
  ticks: readonly ScoreTick[],
  from: number,
  to: number,
  bucketMs: number,
  halfLifeMs: number,
): ScoreBucket[] {
  const out: ScoreBucket[] = [];
  let smoothed: SmoothedScore = INITIAL_SMOOTHED_SCORE;
  let prevT: number | null = null;
  let current: {
    t: number;
    sum: number;
    scored: number;
    min: number | null;
    ticks: number;
    smoothed: number | null;
  } | null = null;
  const flush = (): void => {
    if (current === null) return;
    out.push({
      t: current.t,
      meanScore: current.scored === 0 ? null : current.sum / current.scored,
      minScore: current.min,
      smoothedScore: current.smoothed,
      ticks: current.ticks,
    });
    current = null;
  };
  for (const tick of ticks) {
    smoothed = smoothScore(smoothed, tick.score, prevT === null ? 0 : Math.max(0, tick.t - prevT), { halfLifeMs });
    prevT = tick.t;
    if (tick.t < from || tick.t >= to) continue;
    const b = floorTo(tick.t, bucketMs);
    if (current !== null && current.t !== b) flush();
    current ??= { t: b, sum: 0, scored: 0, min: null, ticks: 0, smoothed: null };
    current.ticks += 1;
    current.smoothed = tick.smoothed === undefined ? smoothed.value : tick.smoothed;
    if (tick.score !== null) {
      current.sum += tick.score;
      current.scored += 1;
      current.min = current.min === null ? tick.score : Math.min(current.min, tick.score);
    }
  }
  flush();
  return out;
}

/** One UTC day of the all-routes day rollup. */
export interface DayTotals {
  day: number;
  requests: number;
  hardBlocks: number;
  challenges: number;
  softBlocks: number;
  latencyHist: readonly number[];
}

/**
 * The normal of each day in [from, to): sums of the 14 whole days [D − 15 d, D − 1 d) — the loop's
 * baseline for a tick at D's midnight (a tick later in the day shifts it by the hours passed).
 */
export function dailyBaselines(days: readonly DayTotals[], from: number, to: number): DayBaseline[] {
  const byDay = new Map(days.map((d) => [d.day, d]));
  const out: DayBaseline[] = [];
  for (let day = floorTo(from, DAY); day < to; day += DAY) {
    let requests = 0;
    let hard = 0;
    let challenges = 0;
    let soft = 0;
    const hist: number[] = [];
    for (let k = BASELINE_GAP_DAYS + 1; k <= BASELINE_GAP_DAYS + BASELINE_DAYS; k++) {
      const d = byDay.get(day - k * DAY);
      if (!d) continue;
      requests += d.requests;
      hard += d.hardBlocks;
      challenges += d.challenges;
      soft += d.softBlocks;
      d.latencyHist.forEach((n, i) => (hist[i] = (hist[i] ?? 0) + n));
    }
    const rate = (n: number): number | null => (requests === 0 ? null : n / requests);
    out.push({
      day,
      hardBlockRate: rate(hard),
      challengeRate: rate(challenges),
      softBlockRate: rate(soft),
      p95LatencyMs:
        quantile(
          LATENCY_HISTOGRAM,
          Array.from(hist, (n) => n ?? 0),
          0.95,
        ) ?? null,
    });
  }
  return out;
}

/**
 * The band per period of [from, to): each change holds until the next. `changes` are in time order and
 * may start with the last change before `from` (the band the period opened in). Consecutive periods of
 * the same band are merged; before the first known change nothing is shaded.
 */
export function bandPeriods(changes: readonly BandChange[], from: number, to: number): BandPeriod[] {
  const out: BandPeriod[] = [];
  changes.forEach((c, i) => {
    const start = Math.max(from, c.t);
    const end = Math.min(to, changes[i + 1]?.t ?? to);
    if (end <= start) return;
    const last = out[out.length - 1];
    if (last && last.band === c.band && last.to === start) last.to = end;
    else out.push({ from: start, to: end, band: c.band satisfies HealthBand });
  });
  return out;
}

const ceilTo = (t: number, unit: number): number => Math.ceil(t / unit) * unit;

/**
 * Requests and errors per minute of each bucket: its counts over the minutes of it the read covered. A bucket
 * sums the rollup rows that start in [from, to), so at the chart's edges it covers less than its width — from
 * the first row starting at or after `from` to the end of the last one starting before `to` — and dividing by
 * the full width would show a dip at both edges. The bar spans what was covered, clipped to the period. One
 * scale at every resolution: an hour's bucket of a 14-day chart reads like the minutes of a 6-hour one.
 */
export function trafficBuckets(rates: readonly RateBucket[], from: number, to: number, r: Resolution): TrafficBucket[] {
  const level = LEVEL_MS[r.level];
  const readFrom = ceilTo(from, level);
  const readTo = ceilTo(to, level);
  return rates.flatMap((b) => {
    const minutes = (Math.min(b.t + r.bucketMs, readTo) - Math.max(b.t, readFrom)) / MINUTE;
    if (minutes <= 0) return [];
    return [
      {
        t: Math.max(b.t, readFrom),
        t2: Math.min(b.t + r.bucketMs, to),
        requestsPerMinute: b.requests / minutes,
        errorsPerMinute: b.errors / minutes,
      },
    ];
  });
}
