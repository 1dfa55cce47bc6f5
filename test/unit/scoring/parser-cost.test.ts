import fc from 'fast-check';
import {
  type ExtractionCounts,
  NO_SCORE,
  costDrift,
  effectiveCostMultiplier,
  healthScore,
  makeWindow,
  parseScoringConfig,
  parserHealth,
} from '../../../core/scoring';
import { runs } from '../../kit/sizes';

const ex = (ok: number, missing: number, schema: number, empty: number): ExtractionCounts => ({
  extractionOk: ok,
  extractionMissingFields: missing,
  extractionSchemaMismatch: schema,
  extractionEmpty: empty,
});
/** 1000 extractions: 1% missing fields, 0 schema mismatches, 5% empty (listing pages are sometimes empty). */
const normal = ex(940, 10, 0, 50);

describe('parser health', () => {
  test('hand-computed: a redesign drops a required field', () => {
    // 100 extractions: missing 21/100 = 0.21 - 0.01 = 0.2 → /0.2 → 1 (capped) × 40 = 40;
    // schema 0 → 0; empty 5/100 = 0.05 = baseline → 0. 100 - 40 = 60.
    const r = parserHealth(ex(74, 21, 0, 5), normal);
    expect(r.score).toBe(60);
    expect(r.reasons).toEqual(['extraction_missing_fields']);
  });

  test('hand-computed: schema mismatch and empty extractions where records are usual', () => {
    // schema 10/200 = 0.05 → 0.25 × 40 = 10; empty 30/200 = 0.15 - 0.05 = 0.1 → 0.5 × 20 = 10 (binary: 9.999…);
    // missing 2/200 = 0.01 = baseline → 0. 100 - 20 = 80. Tie at 10 points → weight order.
    const r = parserHealth(ex(158, 2, 10, 30), normal);
    expect(r.score).toBe(80);
    expect(r.reasons).toEqual(['extraction_schema_mismatch', 'extraction_empty']);
    expect(r.explanation.signals.extraction_schema_mismatch.penalty).toBe(10);
    expect(r.explanation.signals.extraction_empty.penalty).toBeCloseTo(10, 12);
  });

  test('minimum volume and learning', () => {
    expect(parserHealth(ex(49, 0, 0, 0), normal)).toMatchObject({
      score: null,
      reasons: [NO_SCORE.notEnoughExtractions],
    });
    expect(parserHealth(ex(50, 0, 0, 0), normal).score).toBe(100);
    expect(parserHealth(ex(100, 0, 0, 0), null)).toMatchObject({ score: null, reasons: [NO_SCORE.learning] });
    expect(parserHealth(ex(100, 0, 0, 0), ex(199, 0, 0, 0))).toMatchObject({
      score: null,
      reasons: [NO_SCORE.learning],
    });
  });

  const counts = fc.integer({ min: 0, max: 5000 });
  const windowArb = fc.record({
    requests: fc.integer({ min: 0, max: 20_000 }),
    hardBlocks: counts,
    challenges: counts,
    softBlocks: counts,
    p95LatencyMs: fc.integer({ min: 0, max: 10_000 }),
    extractionOk: counts,
    extractionMissingFields: counts,
    extractionSchemaMismatch: counts,
    extractionEmpty: counts,
  });

  test('hostility never lowers parser health, and parser health never lowers the health score', () => {
    fc.assert(
      fc.property(windowArb, windowArb, windowArb, (a, b, base) => {
        // Same extraction outcomes, different hostility → same parser health.
        const hostile = {
          ...b,
          extractionOk: a.extractionOk,
          extractionMissingFields: a.extractionMissingFields,
          extractionSchemaMismatch: a.extractionSchemaMismatch,
          extractionEmpty: a.extractionEmpty,
        };
        const sameParser = JSON.stringify(parserHealth(a, base)) === JSON.stringify(parserHealth(hostile, base));
        // Same hostility, different extraction outcomes → same health score.
        const brokenParser = {
          ...a,
          extractionOk: b.extractionOk,
          extractionMissingFields: b.extractionMissingFields,
          extractionSchemaMismatch: b.extractionSchemaMismatch,
          extractionEmpty: b.extractionEmpty,
        };
        const sameHealth = JSON.stringify(healthScore(a, base)) === JSON.stringify(healthScore(brokenParser, base));
        return sameParser && sameHealth;
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('cost drift', () => {
  // Normal: per valid record 0.1 retries, 50,000 bytes, 1 credit.
  const baseline = makeWindow({
    requests: 12_000,
    hardBlocks: 0,
    challenges: 0,
    softBlocks: 0,
    p95LatencyMs: 100,
    validRecords: 10_000,
    retries: 1000,
    bytes: 500_000_000,
    credits: 10_000,
  });

  test('hand-computed ratios, reasons and cost ratio', () => {
    // 100 valid records: retries 30 → 0.3/rec ÷ 0.1 = 3×; bytes 6e6 → 60,000/rec ÷ 50,000 = 1.2×;
    // credits 250 → 2.5/rec ÷ 1 = 2.5×. Reasons (≥ 1.5×) by ratio: retries, credits. Money: max(1.2, 2.5).
    const current = makeWindow({
      requests: 200,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 100,
      validRecords: 100,
      retries: 30,
      bytes: 6_000_000,
      credits: 250,
    });
    const r = costDrift(current, baseline);
    expect(r.status).toBe('ok');
    expect(r.metrics.cost_retries.ratio).toBeCloseTo(3, 12);
    expect(r.metrics.cost_bytes.ratio).toBeCloseTo(1.2, 12);
    expect(r.metrics.cost_credits.ratio).toBe(2.5);
    expect(r.reasons).toEqual(['cost_retries', 'cost_credits']);
    expect(r.costRatio).toBe(2.5);
  });

  test('baseline per-record costs are floored; unused kinds raise nothing', () => {
    // Baseline never retried (0/rec → floor 0.1): 5 retries per 100 records = 0.05 → 0.5×, no reason.
    // No credits anywhere: ratio 0, not "used", no reason and no effect on the cost ratio.
    const base = makeWindow({
      requests: 1000,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 100,
      validRecords: 1000,
      bytes: 1_000_000,
    });
    const current = makeWindow({
      requests: 100,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 100,
      validRecords: 100,
      retries: 5,
      bytes: 100_000,
    });
    const r = costDrift(current, base);
    expect(r.metrics.cost_retries).toMatchObject({ baseline: 0, baselineFloored: 0.1, ratio: 0.5, used: true });
    expect(r.metrics.cost_credits).toMatchObject({ ratio: 0, used: false });
    expect(r.reasons).toEqual([]);
    expect(r.costRatio).toBe(1);
  });

  test('no valid records at all: every byte is wasted', () => {
    // 0 records → divide by max(1, 0) = 1: 6e6 bytes per "record" ÷ 50,000 = 120×.
    const current = makeWindow({
      requests: 200,
      hardBlocks: 200,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 100,
      bytes: 6_000_000,
    });
    expect(costDrift(current, baseline).metrics.cost_bytes.ratio).toBe(120);
  });

  test('learning and insufficient data', () => {
    const current = makeWindow({
      requests: 200,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 100,
      validRecords: 100,
      retries: 300,
    });
    expect(costDrift(current, null)).toMatchObject({ status: 'learning', reasons: [], costRatio: 1 });
    expect(costDrift({ ...current, requests: 49 }, baseline)).toMatchObject({
      status: 'insufficient-data',
      reasons: [],
    });
  });

  test('effective-cost multiplier: cost ratio × 100 / score, capped', () => {
    expect(effectiveCostMultiplier(1, 100)).toBe(1);
    expect(effectiveCostMultiplier(2.5, 50)).toBe(5); // 2.5 × 100/50
    expect(effectiveCostMultiplier(2.5, 0)).toBe(10); // score floored at 100/10 = 10 → 25 → capped at 10
    expect(effectiveCostMultiplier(2.5, null)).toBe(2.5); // no score: no evidence either way
    expect(effectiveCostMultiplier(0.5, 100)).toBe(1); // never below 1
    expect(effectiveCostMultiplier(3, 50, parseScoringConfig({ cost: { maxMultiplier: 4 } }).cost)).toBe(4);
  });
});
