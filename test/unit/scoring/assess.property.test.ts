/**
 * Hostile but schema-valid windows: counts up to 2^53 - 1, credits up to the largest double,
 * route counts whose sums pass 2^53, latencies up to 2^53 - 1, under the defaults and under extreme but
 * valid configurations. Every assessment must be usable: scores absent or integers in 0-100, every
 * number finite (Infinity and NaN do not survive JSON on their way to the workflow), the site state
 * advanced without error. Inputs the schema refuses fail with WindowValidationError: one short line
 * naming the window. fast-check prints the seed of any failure.
 */
import fc from 'fast-check';
import {
  INITIAL_SITE_STATE,
  type ScoringConfig,
  type WindowInput,
  WindowValidationError,
  advanceSiteState,
  assess,
  parseScoringConfig,
} from '../../../core/scoring';
import { MAX_MESSAGE_CHARS } from '@target-health/crawler/events/zod-issues';
import { runs } from '../../kit/sizes';

const MAX = Number.MAX_SAFE_INTEGER;

const count = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 2_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: MAX }) },
  { weight: 2, arbitrary: fc.constantFrom(0, 1, 2 ** 31, 2 ** 32, 2 ** 52, MAX - 1, MAX) },
);
const latency = fc.oneof(fc.double({ min: 0, max: MAX, noNaN: true }), fc.constantFrom(0, 0.5, 1, MAX));
const credits = fc.oneof(
  fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, Number.MIN_VALUE, Number.MAX_VALUE),
);
const label = fc.oneof(
  fc.constantFrom('p1', 'p2', 'US', 'DE', 'sticky', 'a/b=c'),
  fc.string({ minLength: 1, maxLength: 256 }),
);

const route = fc.record(
  {
    country: label,
    pool: label,
    sessionPattern: label,
    requests: count,
    hardBlocks: count,
    challenges: count,
    softBlocks: count,
    p95LatencyMs: latency,
  },
  { requiredKeys: ['requests', 'hardBlocks', 'challenges', 'softBlocks'] },
);

const window: fc.Arbitrary<WindowInput> = fc.record(
  {
    requests: count,
    hardBlocks: count,
    challenges: count,
    softBlocks: count,
    p95LatencyMs: latency,
    extractionOk: count,
    extractionMissingFields: count,
    extractionSchemaMismatch: count,
    extractionEmpty: count,
    validRecords: count,
    retries: count,
    bytes: count,
    credits,
    canary: fc.record({ runs: count, failures: count, mismatches: count }, { requiredKeys: [] }),
    routes: fc.array(route, { maxLength: 12 }),
  },
  { requiredKeys: ['requests', 'hardBlocks', 'challenges', 'softBlocks', 'p95LatencyMs'] },
);

/** The defaults, or valid extremes: tiny caps and floors, latency multiple just above 1, minimums at 0. */
const config: fc.Arbitrary<ScoringConfig> = fc.oneof(
  fc.constant(parseScoringConfig({})),
  fc
    .record({
      rateExcess: fc.constantFrom(Number.MIN_VALUE, 1e-300, 0.2, 1),
      latencyMultiple: fc.constantFrom(1 + Number.EPSILON, 1.0001, 3, 1e300),
      minRequests: fc.constantFrom(0, 1, 50),
      floor: fc.constantFrom(Number.MIN_VALUE, 1e-300, 1),
      minRouteRequests: fc.constantFrom(0, 1, 30),
      minRateGap: fc.constantFrom(0.1, 0.5, 1),
      maxMultiplier: fc.constantFrom(1, 10, 1e300),
    })
    .map((c) =>
      parseScoringConfig({
        health: { minRequests: c.minRequests, caps: { rateExcess: c.rateExcess, latencyMultiple: c.latencyMultiple } },
        parser: {
          minExtractions: c.minRequests,
          minBaselineExtractions: c.minRequests,
          caps: { rateExcess: c.rateExcess },
        },
        cost: {
          minRequests: c.minRequests,
          minBaselineValidRecords: 0,
          floors: { retriesPerRecord: c.floor, bytesPerRecord: c.floor, creditsPerRecord: c.floor },
          maxMultiplier: c.maxMultiplier,
        },
        learning: { minBaselineRequests: c.minRequests },
        routes: { minRouteRequests: c.minRouteRequests, minRateGap: c.minRateGap },
        totalRefusal: { minRequests: c.minRequests },
      }),
    ),
);

/** Paths of numbers that are not finite, anywhere in a value. */
function nonFinite(value: unknown, path = '', out: string[] = []): string[] {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) out.push(`${path} = ${value}`);
  } else if (Array.isArray(value)) value.forEach((v, i) => nonFinite(v, `${path}[${i}]`, out));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) nonFinite(v, `${path}.${k}`, out);
  return out;
}

const isScore = (s: number | null): boolean => s === null || (Number.isInteger(s) && s >= 0 && s <= 100);

describe('assess on hostile but valid windows', () => {
  test('scores are absent or integers in 0-100, every number is finite, the site state advances', () => {
    fc.assert(
      fc.property(window, fc.option(window, { nil: null }), config, fc.nat(5), (current, baseline, cfg, streak) => {
        const a = assess({ current, baseline, previousRefusal: streak }, cfg);
        expect(isScore(a.health.score)).toBe(true);
        expect(isScore(a.parser.score)).toBe(true);
        expect(nonFinite(a)).toEqual([]);
        const tick = advanceSiteState({ ...INITIAL_SITE_STATE, band: 'healthy' }, a, 60_000, cfg);
        expect(isScore(tick.smoothedScore)).toBe(true);
        expect(tick.effectiveCostMultiplier).toBeGreaterThanOrEqual(1);
        expect(tick.effectiveCostMultiplier).toBeLessThanOrEqual(cfg.cost.maxMultiplier);
        expect(nonFinite(tick)).toEqual([]);
      }),
      { numRuns: runs(10_000) },
    );
  });

  test('route counts whose sums pass 2^53 give an honest "insufficient data", not a wrong route verdict', () => {
    const big = { requests: MAX, hardBlocks: MAX, challenges: 0, softBlocks: 0 };
    const a = assess({
      current: {
        requests: MAX,
        hardBlocks: MAX,
        challenges: 0,
        softBlocks: 0,
        p95LatencyMs: 100,
        routes: [
          { pool: 'a', ...big },
          { pool: 'b', ...big, hardBlocks: 0 },
        ],
      },
      baseline: null,
    });
    expect(a.routes.verdict).toBe('insufficient-data');
    expect(a.routes.summary).toBe(`route counts too large to compare exactly (a total above ${MAX})`);
  });

  test('a credit ratio past the largest double is saturated, not Infinity', () => {
    const base = {
      requests: 1000,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 100,
      validRecords: 1000,
      credits: 0,
    };
    const a = assess({ current: { ...base, validRecords: 1, credits: Number.MAX_VALUE }, baseline: base });
    expect(a.cost.metrics.cost_credits.ratio).toBe(Number.MAX_VALUE);
    expect(a.cost.reasons).toEqual(['cost_credits']);
    expect(a.cost.costRatio).toBe(Number.MAX_VALUE);
  });
});

describe('assess on anything', () => {
  // Valid windows with one field replaced by something arbitrary, and arbitrary values outright.
  const field = fc.constantFrom(
    'requests',
    'hardBlocks',
    'p95LatencyMs',
    'bytes',
    'credits',
    'canary',
    'routes',
    'extractionOk',
  );
  const broken = fc.oneof(
    fc.tuple(window, field, fc.anything()).map(([w, k, v]) => ({ ...w, [k]: v })),
    fc.tuple(window, fc.anything()).map(([w, r]) => ({ ...w, routes: [r] })),
    fc.anything(),
  );

  test('either a usable assessment or a WindowValidationError: one short line naming the window', () => {
    fc.assert(
      fc.property(broken, window, (current, baseline) => {
        let a;
        try {
          a = assess({ current: current as WindowInput, baseline });
        } catch (err) {
          expect(err).toBeInstanceOf(WindowValidationError);
          const message = (err as Error).message;
          expect(message).toMatch(/^current/);
          expect(message).not.toContain('\n');
          expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
          return;
        }
        expect(isScore(a.health.score)).toBe(true);
        expect(nonFinite(a)).toEqual([]);
      }),
      { numRuns: runs(10_000) },
    );
  });
});
