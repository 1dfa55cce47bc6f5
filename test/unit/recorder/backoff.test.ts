/** Retry delays: exponential, capped, jittered within the upper half. */
import { retryDelayMs } from '@target-health/crawler/recorder/backoff';

const policy = { initialMs: 100, maxMs: 5_000 };

test('doubles per attempt from initialMs, in the upper half of each step', () => {
  expect([1, 2, 3, 4].map((n) => retryDelayMs(n, policy, () => 0))).toEqual([50, 100, 200, 400]);
  expect([1, 2, 3, 4].map((n) => retryDelayMs(n, policy, () => 1))).toEqual([100, 200, 400, 800]);
});

test('never exceeds maxMs, however many attempts', () => {
  for (const n of [7, 8, 20, 1_000, 1e9]) {
    expect(retryDelayMs(n, policy, () => 0.999999)).toBeLessThanOrEqual(5_000);
    expect(retryDelayMs(n, policy, () => 0)).toBe(2_500);
  }
});

test('jitter spreads a fleet: many draws at the cap are not alike', () => {
  const draws = new Set(Array.from({ length: 50 }, () => Math.round(retryDelayMs(30, policy))));
  expect(draws.size).toBeGreaterThan(40);
  for (const d of draws) expect(d >= 2_500 && d <= 5_000).toBe(true);
});
