import {
  DEFAULT_SCORING_CONFIG,
  NO_SCORE,
  WindowValidationError,
  assess,
  parseScoringConfig,
} from '../../../core/scoring';

const baseline = {
  requests: 20_000,
  hardBlocks: 200, // 1%
  challenges: 200, // 1%
  softBlocks: 0,
  p95LatencyMs: 300,
  extractionOk: 19_000,
  extractionMissingFields: 200, // ~1%
  extractionSchemaMismatch: 0,
  extractionEmpty: 400,
  validRecords: 19_000,
  retries: 1900,
  bytes: 950_000_000,
  credits: 0,
};

describe('assess', () => {
  test('a quiet tick: scored, everything at 100, no reasons', () => {
    const current = {
      ...baseline,
      requests: 200,
      hardBlocks: 2,
      challenges: 2,
      extractionOk: 190,
      extractionMissingFields: 2,
      extractionEmpty: 4,
      validRecords: 190,
      retries: 19,
      bytes: 9_500_000,
    };
    const a = assess({ current, baseline });
    expect(a.state).toBe('scored');
    expect(a.health).toMatchObject({ scope: 'site', score: 100, reasons: [] });
    expect(a.parser.score).toBe(100);
    expect(a.cost).toMatchObject({ status: 'ok', reasons: [], costRatio: 1 });
    expect(a.totalRefusal.totalRefusal).toBe(false);
    expect(a.reasons).toEqual([]);
  });

  test('no baseline → learning: no score, and it says why', () => {
    const a = assess({
      current: { requests: 500, hardBlocks: 50, challenges: 0, softBlocks: 0, p95LatencyMs: 100 },
      baseline: null,
    });
    expect(a.state).toBe('learning');
    expect(a.health).toMatchObject({ score: null, reasons: [NO_SCORE.learning], explanation: null });
    expect(a.baseline).toMatchObject({ ready: false, detail: 'no baseline yet (new site)' });
    expect(a.parser.reasons).toEqual([NO_SCORE.learning]);
    expect(a.cost.status).toBe('learning');
  });

  test('too few baseline requests → learning (499 < 500), enough → scored', () => {
    const current = { requests: 100, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 100 };
    const small = assess({
      current,
      baseline: { requests: 499, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 100 },
    });
    expect(small.state).toBe('learning');
    expect(small.baseline.detail).toBe('baseline has 499 requests, needs 500');
    expect(
      assess({ current, baseline: { requests: 500, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 100 } })
        .state,
    ).toBe('scored');
  });

  test('too few current requests → insufficient-data with the seed reason', () => {
    const a = assess({
      current: { requests: 49, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 100 },
      baseline,
    });
    expect(a.state).toBe('insufficient-data');
    expect(a.health.reasons).toEqual([NO_SCORE.notEnoughRequests]);
  });

  test('all reasons of a bad tick, hostility first', () => {
    const current = {
      requests: 200,
      hardBlocks: 2,
      challenges: 62, // 31% vs 1% → capped → 25
      softBlocks: 0,
      p95LatencyMs: 300,
      extractionOk: 100,
      extractionMissingFields: 30, // 30/133 = 22.6% vs 200/19,600 = 1.0% → capped → 40
      extractionSchemaMismatch: 0,
      extractionEmpty: 3, // 3/133 = 2.26% vs 400/19,600 = 2.04% → 0.0021/0.2 × 20 = 0.21 (no reason)
      validRecords: 100,
      retries: 60, // 0.6/rec vs 0.1 → 6×
      bytes: 5_000_000, // 50,000/rec: normal
      credits: 0,
      canary: { runs: 4, failures: 0, mismatches: 1 },
    };
    const a = assess({ current, baseline });
    // Health: hb 1% = baseline → 0; challenges capped → 25; latency = baseline → 0. 100 - 25 = 75.
    expect(a.health.score).toBe(75);
    // Parser: 100 - 40 - 0.21 = 59.79 → 60.
    expect(a.parser.score).toBe(60);
    expect(a.canary.mismatch).toBe(true);
    expect(a.reasons).toEqual(['challenge', 'canary_mismatch', 'extraction_missing_fields', 'cost_retries']);
  });

  test('validates its input and names the field', () => {
    expect(() =>
      assess({
        current: { requests: -1, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 1 },
        baseline: null,
      }),
    ).toThrow(WindowValidationError);
    expect(() =>
      assess({
        current: { requests: 1, hardBlocks: 0, challenges: 0, softBlocks: 0, p95LatencyMs: 1 },
        baseline: { requests: 1 } as never,
      }),
    ).toThrow(
      'baseline.hardBlocks: required; baseline.challenges: required; baseline.softBlocks: required; ' +
        'baseline.p95LatencyMs: required',
    );
  });

  test('is deterministic: the same input gives the same assessment', () => {
    const input = { current: { ...baseline, requests: 300, hardBlocks: 30 }, baseline };
    expect(JSON.stringify(assess(input))).toBe(JSON.stringify(assess(input)));
  });

  test('uses the configuration it is given', () => {
    const config = parseScoringConfig({ learning: { minBaselineRequests: 30_000 } });
    expect(assess({ current: baseline, baseline }, config).state).toBe('learning');
    expect(assess({ current: baseline, baseline }, DEFAULT_SCORING_CONFIG).state).toBe('scored');
  });
});
