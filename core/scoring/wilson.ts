/**
 * 95% Wilson score interval for a proportion. Chosen over the textbook (Wald) interval because it stays
 * inside [0, 1] and keeps honest coverage for small samples and rates near 0 — exactly the situations a
 * block rate lives in — so a reader of an explanation sees how sure a rate is.
 */
export interface Interval {
  low: number;
  high: number;
}

/** Two-sided 95% normal quantile. */
export const Z_95 = 1.959963984540054;

export function wilsonInterval(successes: number, trials: number, z: number = Z_95): Interval {
  if (trials <= 0) return { low: 0, high: 1 }; // no data: every rate is possible
  // Counts may exceed trials in malformed aggregates (the score tolerates that); clamp for the interval.
  const k = Math.min(Math.max(successes, 0), trials);
  const p = k / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  // At k = 0 (k = n) the bound is exactly 0 (1); say so instead of leaving a 1e-17 rounding residue.
  return { low: k === 0 ? 0 : Math.max(0, centre - half), high: k === trials ? 1 : Math.min(1, centre + half) };
}
