/**
 * One-sided Fisher exact test for "group A fails more often than group B". Used by route diagnosis
 * because per-route samples are often small (a pool that got 40 requests this tick): the exact
 * hypergeometric tail has no large-sample assumption, unlike a z-test on two proportions, whose normal
 * approximation is poor exactly when counts are small or rates are near 0 or 1 — the common case for
 * block rates. Pure arithmetic (log-gamma), no dependencies.
 */

// Lanczos approximation (g = 7, n = 9): ~15 significant digits for arguments >= 1, enough for p-values.
const LANCZOS_G = 7;
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/** ln Γ(x) for x >= 1 (all this module needs: factorials). */
export function logGamma(x: number): number {
  const y = x - 1;
  let a = LANCZOS[0] ?? 1;
  for (let i = 1; i < LANCZOS.length; i++) a += (LANCZOS[i] ?? 0) / (y + i);
  const t = y + LANCZOS_G + 0.5;
  return HALF_LOG_TWO_PI + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/**
 * P(X >= k) for X ~ Hypergeometric(population, successes, draws): the probability that a group of
 * `draws` requests gets at least `k` of the `successes` failures when failures are spread at random over
 * all `population` requests. All arguments are non-negative integers with successes, draws <= population.
 */
export function hypergeometricUpperTail(k: number, population: number, successes: number, draws: number): number {
  const lo = Math.max(0, draws - (population - successes));
  const hi = Math.min(draws, successes);
  const start = Math.max(k, lo);
  if (start > hi) return 0;
  if (start <= lo) return 1;
  const logDenominator = logChoose(population, draws);
  let logTerm = logChoose(successes, start) + logChoose(population - successes, draws - start) - logDenominator;
  // Sum in log-space relative to the largest term; stop once terms past the peak are negligible.
  const logs: number[] = [];
  let maxLog = -Infinity;
  for (let x = start; x <= hi; x++) {
    logs.push(logTerm);
    if (logTerm > maxLog) maxLog = logTerm;
    else if (logTerm < maxLog - 40) break; // e^-40 ≈ 4e-18 of the peak: below double precision
    // pmf(x + 1) / pmf(x) for the hypergeometric distribution.
    logTerm += Math.log((successes - x) * (draws - x)) - Math.log((x + 1) * (population - successes - draws + x + 1));
  }
  let scaled = 0;
  for (const l of logs) scaled += Math.exp(l - maxLog);
  return Math.min(1, Math.max(0, Math.exp(maxLog) * scaled));
}

/**
 * One-sided p-value that group A's failure rate exceeds group B's: Fisher exact test on the 2x2 table
 * [[failuresA, okA], [failuresB, okB]].
 */
export function fisherExactGreater(failuresA: number, requestsA: number, failuresB: number, requestsB: number): number {
  return hypergeometricUpperTail(failuresA, requestsA + requestsB, failuresA + failuresB, requestsA);
}
