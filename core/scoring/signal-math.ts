/**
 * The arithmetic shared by the health and parser scores. Each expression mirrors the Python reference
 * operation for operation (same operands, same order), because "exactly the reference" means the same
 * IEEE-754 doubles, not merely close ones: `round()` of x.5 sums depends on the last bit.
 */

/** Python `min(1.0, max(0.0, x))`. */
export function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/** Python `count / max(1, requests)`. */
export function rateOf(count: number, requests: number): number {
  return count / Math.max(1, requests);
}

/**
 * Python `min(1.0, max(0.0, (now - base) / 0.20))` with the 0.20 configurable. Divides by the cap (not
 * multiplies by its inverse) so the default reproduces the reference bit for bit.
 */
export function rateBadness(now: number, base: number, rateExcessCap: number): number {
  return clamp01((now - base) / rateExcessCap);
}

/** The seed floors the baseline p95 at 1 ms so a near-zero baseline cannot explode the ratio. */
export const LATENCY_BASELINE_FLOOR_MS = 1;

/**
 * Python `min(1.0, max(0.0, (now / max(base, 1.0) - 1) / 2))`, where 2 = (latency multiple 3) - 1.
 * `latencyMultiple - 1` is exact for the default 3, so the default divides by exactly 2.
 */
export function latencyBadness(now: number, base: number, latencyMultiple: number): number {
  return clamp01((now / Math.max(base, LATENCY_BASELINE_FLOOR_MS) - 1) / (latencyMultiple - 1));
}

/**
 * Python `sum(values)` as a left fold from 0: ((0 + a) + b) + ... . (Python 3.12+ sums floats with
 * compensation; the reference pins the plain fold, see test/kit/reference/health_score.py.)
 */
export function leftFoldSum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total = total + value;
  return total;
}

/** A penalty of at least this many points makes its signal a reason (seed: `p >= 1`). */
export const REASON_MIN_PENALTY = 1;

/**
 * Python `[k for k, p in sorted(items, key=lambda kv: -kv[1]) if p >= 1]`: penalty descending, ties in
 * the given (weight) order — Array.prototype.sort is stable, like Python's sorted.
 */
export function rankReasons<K extends string>(penalties: ReadonlyArray<readonly [K, number]>): K[] {
  return [...penalties]
    .sort((a, b) => b[1] - a[1])
    .filter(([, p]) => p >= REASON_MIN_PENALTY)
    .map(([k]) => k);
}
