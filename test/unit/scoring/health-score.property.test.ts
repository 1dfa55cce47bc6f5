import fc from 'fast-check';
import {
  HEALTH_SIGNALS,
  type HealthConfig,
  type HostilityWindow,
  healthScore,
  parseScoringConfig,
} from '../../../core/scoring';
import { runs } from '../../kit/sizes';

const count = (max: number) => fc.integer({ min: 0, max });
const latency = fc.oneof(
  fc.double({ min: 0, max: 1e6, noNaN: true }),
  fc.integer({ min: 0, max: 100_000 }),
  fc.double({ min: 0, max: 2, noNaN: true }),
);

const window: fc.Arbitrary<HostilityWindow> = fc.integer({ min: 0, max: 1_000_000 }).chain((requests) =>
  fc.record({
    requests: fc.constant(requests),
    // Up to 1.5 × requests: malformed aggregates with more events than requests must still be safe.
    hardBlocks: count(Math.ceil(requests * 1.5)),
    challenges: count(Math.ceil(requests * 1.5)),
    softBlocks: count(Math.ceil(requests * 1.5)),
    p95LatencyMs: latency,
  }),
);

/** Valid health configs: weights summing to exactly 100 (quarters are exact in binary), caps in range. */
const healthConfig: fc.Arbitrary<HealthConfig> = fc
  .tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }))
  .filter(([a, b, c]) => a + b + c <= 400)
  .chain(([a, b, c]) =>
    fc.record({
      minRequests: fc.integer({ min: 0, max: 200 }),
      weights: fc.constant({ hard_block: a / 4, challenge: b / 4, soft_block: c / 4, latency: (400 - a - b - c) / 4 }),
      caps: fc.record({
        rateExcess: fc.double({ min: 0.01, max: 1, noNaN: true }),
        latencyMultiple: fc.double({ min: 1.01, max: 20, noNaN: true }),
      }),
    }),
  )
  .map((input) => parseScoringConfig({ health: input }).health);

const anyConfig = fc.oneof(fc.constant(parseScoringConfig({}).health), healthConfig);

describe('healthScore properties', () => {
  test('the score is absent (exactly when requests < minimum) or an integer within [0, 100]', () => {
    fc.assert(
      fc.property(window, window, anyConfig, (current, baseline, config) => {
        const { score } = healthScore(current, baseline, config);
        if (current.requests < config.minRequests) return score === null;
        return score !== null && Number.isInteger(score) && score >= 0 && score <= 100;
      }),
      { numRuns: runs(2000) },
    );
  });

  test('no signal costs more than its weight, nor less than zero', () => {
    fc.assert(
      fc.property(window, window, anyConfig, (current, baseline, config) => {
        const { explanation } = healthScore(current, baseline, config);
        return HEALTH_SIGNALS.every(
          (k) => explanation.signals[k].penalty >= 0 && explanation.signals[k].penalty <= config.weights[k],
        );
      }),
      { numRuns: runs(2000) },
    );
  });

  test('no penalty when the current window is no worse than the baseline on every signal', () => {
    // Current = baseline scaled by k, with each count then lowered: k·c/(k·n) rounds to the same double
    // as c/n, so every current rate is <= the baseline rate, and latency is <= the baseline p95.
    const noWorse = fc
      .record({
        baseline: window.filter((b) => b.requests >= 1),
        k: fc.integer({ min: 1, max: 50 }),
        cuts: fc.tuple(fc.nat(), fc.nat(), fc.nat()),
        latencyShare: fc.double({ min: 0, max: 1, noNaN: true }),
      })
      .map(({ baseline, k, cuts, latencyShare }) => ({
        baseline,
        current: {
          requests: baseline.requests * k,
          hardBlocks: Math.max(0, baseline.hardBlocks * k - cuts[0]),
          challenges: Math.max(0, baseline.challenges * k - cuts[1]),
          softBlocks: Math.max(0, baseline.softBlocks * k - cuts[2]),
          p95LatencyMs: Math.max(baseline.p95LatencyMs, 1) * latencyShare,
        },
      }));
    fc.assert(
      fc.property(noWorse, anyConfig, ({ current, baseline }, config) => {
        const r = healthScore(current, baseline, config);
        const penalties = HEALTH_SIGNALS.map((k) => r.explanation.signals[k].penalty);
        return penalties.every((p) => p === 0) && (r.score === null || (r.score === 100 && r.reasons.length === 0));
      }),
      { numRuns: runs(2000) },
    );
  });

  test('the score never rises when a bad count (or latency) rises', () => {
    const field = fc.constantFrom('hardBlocks', 'challenges', 'softBlocks', 'p95LatencyMs');
    fc.assert(
      fc.property(
        window,
        window,
        anyConfig,
        field,
        fc.integer({ min: 1, max: 1_000_000 }),
        (current, baseline, config, f, delta) => {
          const worse = { ...current, [f]: current[f] + delta };
          const a = healthScore(current, baseline, config).score;
          const b = healthScore(worse, baseline, config).score;
          return a === null ? b === null : b !== null && b <= a;
        },
      ),
      { numRuns: runs(3000) },
    );
  });

  test('reasons are exactly the signals with penalty >= 1, by penalty descending', () => {
    fc.assert(
      fc.property(window, window, anyConfig, (current, baseline, config) => {
        const r = healthScore(current, baseline, config);
        if (r.score === null) return true;
        const p = (k: string) => r.explanation.signals[k as (typeof HEALTH_SIGNALS)[number]].penalty;
        const expected = HEALTH_SIGNALS.filter((k) => p(k) >= 1);
        const sortedDesc = r.reasons.every((k, i) => i === 0 || p(r.reasons[i - 1] ?? k) >= p(k));
        return sortedDesc && [...r.reasons].sort().join() === [...expected].sort().join();
      }),
      { numRuns: runs(2000) },
    );
  });
});
