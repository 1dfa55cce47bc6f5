import { DEFAULT_SCORING_CONFIG, ScoringConfigError, parseScoringConfig } from '../../../core/scoring';

describe('scoring config', () => {
  test('defaults', () => {
    expect(DEFAULT_SCORING_CONFIG.health).toEqual({
      minRequests: 50,
      weights: { hard_block: 35, challenge: 25, soft_block: 25, latency: 15 },
      caps: { rateExcess: 0.2, latencyMultiple: 3 },
    });
    expect(DEFAULT_SCORING_CONFIG.smoothing.halfLifeMs).toBe(600_000);
    expect(DEFAULT_SCORING_CONFIG.bands).toEqual({ healthyMin: 80, degradingMin: 50, hysteresis: 3 });
    expect(DEFAULT_SCORING_CONFIG.totalRefusal).toEqual({
      enabled: true,
      threshold: 0.9,
      consecutiveTicks: 2,
      minRequests: 50,
    });
    expect(DEFAULT_SCORING_CONFIG.learning.minBaselineRequests).toBe(500);
  });

  test('the defaults are frozen', () => {
    expect(() => {
      (DEFAULT_SCORING_CONFIG.health.weights as { hard_block: number }).hard_block = 50;
    }).toThrow(TypeError);
    expect(DEFAULT_SCORING_CONFIG.health.weights.hard_block).toBe(35);
  });

  test('partial input keeps the other defaults', () => {
    const c = parseScoringConfig({ health: { weights: { hard_block: 45, challenge: 15 } } });
    expect(c.health.weights).toEqual({ hard_block: 45, challenge: 15, soft_block: 25, latency: 15 });
    expect(c.health.caps.rateExcess).toBe(0.2);
  });

  test.each([
    [{ health: { weights: { hard_block: 45 } } }, 'invalid scoring config: health.weights: must sum to 100 (got 110)'],
    [
      { health: { weights: { hard_block: -5, challenge: 65 } } },
      'health.weights.hard_block: expected a non-negative weight',
    ],
    [{ health: { weights: { hardblock: 35 } } }, 'health.weights: unknown field "hardblock"'],
    [{ health: { caps: { rateExcess: 0 } } }, 'health.caps.rateExcess: expected a number in (0, 1]'],
    [{ health: { caps: { latencyMultiple: 1 } } }, 'health.caps.latencyMultiple: expected a number greater than 1'],
    [{ health: { minRequests: -1 } }, 'health.minRequests: expected a non-negative integer'],
    [{ parser: { weights: { extraction_empty: 30 } } }, 'parser.weights: must sum to 100 (got 110)'],
    [{ smoothing: { halfLifeMs: 0 } }, 'smoothing.halfLifeMs: expected a positive number of milliseconds'],
    [{ bands: { healthyMin: 40 } }, 'bands: degradingMin (50) must be below healthyMin (40)'],
    [{ totalRefusal: { threshold: 1.5 } }, 'totalRefusal.threshold: expected a number in (0, 1]'],
  ])('rejects %j with a clear error', (input, message) => {
    expect(() => parseScoringConfig(input)).toThrow(ScoringConfigError);
    expect(() => parseScoringConfig(input)).toThrow(message);
  });

  test('accepts weights that sum to 100 only up to binary rounding', () => {
    expect(
      parseScoringConfig({ health: { weights: { hard_block: 33.3, challenge: 33.3, soft_block: 33.4, latency: 0 } } })
        .health.weights.soft_block,
    ).toBe(33.4);
  });
});
