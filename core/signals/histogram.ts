/**
 * Log-bucket histograms that merge by adding arrays element-wise — in TypeScript and in PostgreSQL
 * (`th_hist_add` / `th_hist_sum`, server/db/migrations/002_signal_store.sql) alike — so per-minute rollups can
 * be summed into any window and a quantile read from the sum.
 *
 * Bucket 0 holds values below 1; bucket i ≥ 1 holds [γ^(i-1), γ^i); the last bucket also takes
 * everything above `max`. A quantile is reported as its bucket's geometric midpoint γ^(i-½), so for
 * values between 1 and `max` the relative error is at most √γ − 1 (2.47% for latency, γ = 1.05).
 */
export interface LogHistogramSpec {
  gamma: number;
  /** Values at or above this share the last bucket. */
  max: number;
  /** Number of buckets, derived from gamma and max. */
  size: number;
  /** √γ − 1: the largest relative error of a reported quantile within [1, max). */
  relativeError: number;
}

export function logHistogramSpec(gamma: number, max: number): LogHistogramSpec {
  return { gamma, max, size: 2 + Math.ceil(Math.log(max) / Math.log(gamma)), relativeError: Math.sqrt(gamma) - 1 };
}

/** Latency in ms, up to 10 minutes. 275 buckets, ±2.47%. */
export const LATENCY_HISTOGRAM = logHistogramSpec(1.05, 600_000);
/** Response sizes in bytes, up to 1 GB. 220 buckets, ±4.88%. */
export const BYTES_HISTOGRAM = logHistogramSpec(1.1, 1_000_000_000);

export function bucketIndex(spec: LogHistogramSpec, value: number): number {
  if (!(value >= 1)) return 0;
  if (value >= spec.max) return spec.size - 1;
  // 1 + floor(log_γ v), guarded against floating error at exact bucket edges.
  const i = 1 + Math.floor(Math.log(value) / Math.log(spec.gamma));
  return Math.min(Math.max(i, 1), spec.size - 1);
}

/** The value a bucket stands for: its geometric midpoint (0.5 for the "below 1" bucket). */
export function bucketValue(spec: LogHistogramSpec, index: number): number {
  if (index <= 0) return 0.5;
  return Math.pow(spec.gamma, index - 0.5);
}

export function emptyHistogram(spec: LogHistogramSpec): number[] {
  return new Array<number>(spec.size).fill(0);
}

/** Adds `b` into `a` (in place) and returns `a`; shorter arrays count as zeros. */
export function mergeInto(a: number[], b: readonly number[]): number[] {
  for (let i = 0; i < b.length; i++) a[i] = (a[i] ?? 0) + (b[i] ?? 0);
  return a;
}

/**
 * Nearest-rank quantile (the value at rank ⌈q·n⌉), as a bucket midpoint; undefined when empty. The
 * same rank definition as {@link nearestRank} on raw values, so the two agree within the stated error.
 */
export function quantile(spec: LogHistogramSpec, histogram: readonly number[], q: number): number | undefined {
  let total = 0;
  // Indexed, not for…of: a replay reads a quantile on every tick, and the iterator allocated per bucket there.
  for (let i = 0; i < histogram.length; i++) total += histogram[i]!;
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank) return bucketValue(spec, i);
  }
  return bucketValue(spec, histogram.length - 1);
}

/** Nearest-rank quantile of raw values (for checks against the histogram). */
export function nearestRank(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
}
