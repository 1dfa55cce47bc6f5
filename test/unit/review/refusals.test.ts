import type { RateBucket } from '../../../tools/charts/types';
import { PEAK_SHARE, refusalPeak, spanRate, trailingRates } from '../../../client/review/refusals';

const M = 60_000;
const T0 = Date.parse('2026-11-24T12:00:00Z');
/** One minute bucket: `requests`, of which `refused` hard blocks. */
const minute = (i: number, requests: number, refused: number): RateBucket => ({
  t: T0 + i * M,
  requests,
  hardBlocks: refused,
  challenges: 0,
  softBlocks: 0,
  errors: 0,
  p95LatencyMs: null,
});

test('spanRate: requests, refusals of every kind, rate and requests per minute over [from, to)', () => {
  const b = [minute(0, 10, 1), { ...minute(1, 10, 1), challenges: 2, softBlocks: 3 }, minute(2, 100, 100)];
  expect(spanRate(b, T0, T0 + 2 * M)).toEqual({ requests: 20, refusals: 7, rate: 0.35, perMinute: 10 });
  expect(spanRate(b, T0 + 5 * M, T0 + 6 * M)).toEqual({ requests: 0, refusals: 0, rate: null, perMinute: 0 });
});

test('trailingRates: the five minutes ending with each bucket, gaps included, none under 20 requests', () => {
  const b = [minute(0, 10, 0), minute(1, 10, 10), minute(3, 10, 10), minute(6, 30, 0)];
  expect(trailingRates(b, T0, T0 + 10 * M, M)).toEqual([
    { t: T0, rate: null },
    { t: T0 + M, rate: 0.5 },
    { t: T0 + 3 * M, rate: 20 / 30 },
    // Minute 6's window is minutes 2–6: minute 1 has left it.
    { t: T0 + 6 * M, rate: 10 / 40 },
  ]);
});

test('refusalPeak: the highest trailing rate, and the first minute within PEAK_SHARE of it', () => {
  // A climb to a noisy plateau: 0 %, then 50 %, 85 %, 80 %, 90 %, 84 % of 100 requests a minute.
  const shares = [0, 0, 0, 0, 0, 50, 85, 80, 90, 84, 80, 80, 80, 80, 80];
  const b = shares.map((s, i) => minute(i, 100, s));
  const peak = refusalPeak(b, T0 + 5 * M, T0 + 15 * M, M)!;
  const rates = trailingRates(b, T0 + 5 * M, T0 + 15 * M, M);
  const top = Math.max(...rates.map((r) => r.rate!));
  expect(peak.rate).toBe(top);
  expect(peak.at).toBe(rates.find((r) => r.rate === top)!.t);
  expect(peak.reachedAt).toBe(rates.find((r) => r.rate! >= PEAK_SHARE * top)!.t);
  expect(peak.reachedAt).toBeLessThan(peak.at);
  expect(refusalPeak([minute(0, 5, 5)], T0, T0 + M, M)).toBeNull();
});
