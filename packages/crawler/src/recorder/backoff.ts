/**
 * Delay before the next attempt of a failed write: exponential from `initialMs`, capped at `maxMs`, with
 * "equal jitter" (a random point in the upper half), so the crawlers of a fleet that lost the database at
 * the same moment do not all come back at the same moment, and no delay is ever near zero.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export function retryDelayMs(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  // 2^30 is far past any cap; the bound keeps the power finite for absurd attempt numbers.
  const exponential = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return exponential / 2 + random() * (exponential / 2);
}
