import {
  type HealthConfig,
  type HostilityWindow,
  NO_SCORE,
  healthScore,
  parseScoringConfig,
} from '../../../core/scoring';

const w = (
  requests: number,
  hardBlocks: number,
  challenges: number,
  softBlocks: number,
  p95LatencyMs: number,
): HostilityWindow => ({
  requests,
  hardBlocks,
  challenges,
  softBlocks,
  p95LatencyMs,
});
/** A quiet baseline: 1000 requests, nothing refused, p95 100 ms. */
const B0 = w(1000, 0, 0, 0, 100);

// Hand-computed with the reference arithmetic; each row says how.
const cases: Array<[string, HostilityWindow, HostilityWindow, number | null, string[]]> = [
  // hb rate 10/100 = 0.1; (0.1 - 0)/0.20 = 0.5; 35 * 0.5 = 17.5; 100 - 17.5 = 82.5 → tie → 82 (even).
  ['x.5 rounds down to even', w(100, 10, 0, 0, 100), B0, 82, ['hard_block']],
  // ch rate 0.1 → badness 0.5 → 25 * 0.5 = 12.5; 100 - 12.5 = 87.5 → tie → 88 (even).
  ['x.5 rounds up to even', w(100, 0, 10, 0, 100), B0, 88, ['challenge']],
  // hb 14/100 = 0.14; 0.14/0.20 = 0.7000000000000001 (binary); × 35 = 24.500000000000004;
  // 100 - that = 75.499999999999996 → nearest double is exactly 75.5 → tie → 76 (even).
  ['x.5 reached through binary rounding', w(100, 14, 0, 0, 100), B0, 76, ['hard_block']],
  // Zero-request baseline: rates divide by max(1, 0) = 1 → 0; p95 0 floored to 1 ms.
  // hb 5/100 = 0.05 → 0.25 → 8.75; latency 1/1 - 1 = 0 → 0. 100 - 8.75 = 91.25 → 91.
  ['zero-request baseline', w(100, 5, 0, 0, 1), w(0, 0, 0, 0, 0), 91, ['hard_block']],
  // Zero-request baseline with a count: its rate is 1/max(1, 0) = 1.0, so 0.05 is below it → no penalty.
  ['zero-request baseline with counts', w(100, 5, 0, 0, 100), w(0, 1, 0, 0, 100), 100, []],
  // Baseline p95 0.25 ms floored to 1 ms: 2/1 - 1 = 1; /2 = 0.5; 15 * 0.5 = 7.5; 92.5 → 92.
  // (Unfloored it would be 2/0.25 = 8× → capped → 85.)
  ['baseline latency below 1 ms', w(100, 0, 0, 0, 2), w(1000, 0, 0, 0, 0.25), 92, ['latency']],
  // Every signal capped: rates 1.0 → (1 - 0)/0.2 = 5 → 1; latency 1000/100 = 10× → (10-1)/2 → 1.
  // 35 + 25 + 25 + 15 = 100 → 0.
  ['all signals capped', w(100, 100, 100, 100, 1000), B0, 0, ['hard_block', 'challenge', 'soft_block', 'latency']],
  // Every request a 403: capped at its weight, 100 - 35 = 65 (why total refusal exists).
  ['one runaway signal is capped', w(100, 100, 0, 0, 100), B0, 65, ['hard_block']],
  // Tie: challenge 12.5 and soft_block 12.5 → weight order; 100 - 25 = 75.
  ['tie keeps weight order', w(100, 0, 10, 10, 100), B0, 75, ['challenge', 'soft_block']],
  // Tie across weights: sb 6/100 = 0.06; 0.06/0.2 = 0.3 → 25 * 0.3 = 7.5; latency 200/100 = 2 → 0.5 → 7.5.
  // 100 - 15 = 85; tie → soft_block before latency (weight order).
  ['tie between soft_block and latency', w(100, 0, 0, 6, 200), B0, 85, ['soft_block', 'latency']],
  // latency 300/100 = 3× → (3-1)/2 = 1 → 15; challenge 12.5; 100 - 27.5 = 72.5 → 72. Sorted by penalty.
  ['higher penalty first', w(100, 0, 10, 0, 300), B0, 72, ['latency', 'challenge']],
  // 49 requests: below MIN_REQUESTS, no score whatever the counts.
  ['exactly 49 requests', w(49, 49, 0, 0, 100), B0, null, [NO_SCORE.notEnoughRequests]],
  // 50 requests: scored. hb 5/50 = 0.1 → 17.5 → 82.5 → 82.
  ['exactly 50 requests', w(50, 5, 0, 0, 100), B0, 82, ['hard_block']],
  // hb 5/1000 = 0.005 → 0.025 → 35 * 0.025 = 0.875 < 1: costs points but is no reason. 99.125 → 99.
  ['penalty below 1 is not a reason', w(1000, 5, 0, 0, 100), B0, 99, []],
  // Same rates as the baseline (5% each): only excess counts → 100.
  ['no worse than baseline', w(100, 5, 5, 5, 100), w(1000, 50, 50, 50, 100), 100, []],
  // Penalties 22.499999999999996, 23.214285714285715, 1.7857142857142856, 0: the plain left fold gives
  // 100 - 47.49999999999999 = 52.50000000000001 → 53. (Python ≥ 3.12's compensated sum() gives 52.5 → 52;
  // the product pins the plain fold, see docs/scoring.md.)
  [
    'summation order pinned (Python 3.12 sum differs)',
    w(70, 9, 13, 1, 100),
    w(0, 0, 0, 0, 100),
    53,
    ['challenge', 'hard_block', 'soft_block'],
  ],
];

describe('healthScore: hand-computed reference cases', () => {
  test.each(cases)('%s', (_name, current, baseline, score, reasons) => {
    const result = healthScore(current, baseline);
    expect(result.score).toBe(score);
    expect(result.reasons).toEqual(reasons);
  });
});

describe('healthScore: configurable weights, caps and minimum', () => {
  const config = (input: object): HealthConfig => parseScoringConfig({ health: input }).health;

  test('equal weights: capped signals tie and keep weight order', () => {
    // Each 25 * 1 = 25; 100 - 100 = 0.
    const r = healthScore(
      w(100, 100, 100, 100, 1000),
      B0,
      config({ weights: { hard_block: 25, challenge: 25, soft_block: 25, latency: 25 } }),
    );
    expect(r.score).toBe(0);
    expect(r.reasons).toEqual(['hard_block', 'challenge', 'soft_block', 'latency']);
  });

  test('a wider rate cap halves the badness', () => {
    // hb 0.1 / 0.4 = 0.25 → 35 * 0.25 = 8.75 → 91.25 → 91 (default cap 0.2 would give 82).
    expect(healthScore(w(100, 10, 0, 0, 100), B0, config({ caps: { rateExcess: 0.4 } })).score).toBe(91);
  });

  test('a latency multiple of 2 saturates at twice the baseline', () => {
    // 200/100 = 2 → (2 - 1)/(2 - 1) = 1 → 15 → 85 (default multiple 3 would give 92).
    expect(healthScore(w(100, 0, 0, 0, 200), B0, config({ caps: { latencyMultiple: 2 } })).score).toBe(85);
  });

  test('minimum requests is configurable', () => {
    expect(healthScore(w(20, 2, 0, 0, 100), B0, config({ minRequests: 20 })).score).toBe(82); // 2/20 = 0.1 → 82.5 → 82
    expect(healthScore(w(19, 2, 0, 0, 100), B0, config({ minRequests: 20 })).score).toBeNull();
  });
});

describe('healthScore: explanation', () => {
  test('reports now, baseline, excess, badness, penalty and Wilson intervals per signal', () => {
    const r = healthScore(w(100, 10, 0, 0, 150), w(1000, 20, 0, 0, 100));
    const hb = r.explanation.signals.hard_block;
    // now 0.1, baseline 0.02, excess 0.08, badness 0.08/0.2 = 0.4 (binary: 0.39999999999999997), penalty 35 × that.
    expect(hb).toMatchObject({ kind: 'rate', weight: 35, count: 10, outOf: 100, now: 0.1, baseline: 0.02, cap: 0.2 });
    expect(hb.excess).toBeCloseTo(0.08, 15);
    expect(hb.badness).toBeCloseTo(0.4, 15);
    expect(hb.penalty).toBeCloseTo(14, 12);
    // Wilson 95% for 10/100: ≈ [0.0552, 0.1744] (textbook value); for 20/1000 ≈ [0.0130, 0.0307].
    expect(hb.interval.now.low).toBeCloseTo(0.0552, 4);
    expect(hb.interval.now.high).toBeCloseTo(0.1744, 4);
    expect(hb.interval.baseline.low).toBeCloseTo(0.013, 3);
    expect(hb.interval.baseline.high).toBeCloseTo(0.0307, 4);
    const lat = r.explanation.signals.latency;
    // 150/100 = 1.5 → excess 0.5 → badness 0.25 → 3.75 points.
    expect(lat).toEqual({
      kind: 'latency',
      weight: 15,
      now: 150,
      baseline: 100,
      baselineFloored: 100,
      ratio: 1.5,
      excess: 0.5,
      cap: 3,
      badness: 0.25,
      penalty: 3.75,
    });
    // 100 - (14 + 3.75) = 82.25 → 82.
    expect(r.explanation.unrounded).toBeCloseTo(82.25, 12);
    expect(r.score).toBe(82);
  });

  test('is filled in even when there are too few requests to score', () => {
    const r = healthScore(w(10, 10, 0, 0, 100), B0);
    expect(r.score).toBeNull();
    expect(r.explanation.signals.hard_block.penalty).toBe(35);
    expect(r.explanation.minRequests).toBe(50);
  });
});
