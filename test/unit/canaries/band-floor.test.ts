import {
  applyCanaryFloor,
  applyCanaryFloorToTick,
  canaryPolicySchema,
  DEFAULT_CANARY_POLICY,
} from '../../../core/canaries/band-floor';
import { advanceSiteState, assess, INITIAL_SITE_STATE, makeWindow } from '../../../core/scoring';

describe('canary band floor', () => {
  test('by default a mismatch puts a healthy (or learning) site in degrading and heads the reasons', () => {
    expect(
      applyCanaryFloor({ band: 'healthy', reasons: ['latency', 'canary_mismatch', 'cost_bytes'], mismatch: true }),
    ).toEqual({
      band: 'degrading',
      reasons: ['canary_mismatch', 'latency', 'cost_bytes'],
      floored: true,
    });
    expect(applyCanaryFloor({ band: 'learning', reasons: ['canary_mismatch'], mismatch: true })).toMatchObject({
      band: 'degrading',
      floored: true,
    });
  });

  test('never lowers a band, never touches stopped, does nothing without a mismatch', () => {
    expect(
      applyCanaryFloor({ band: 'resisting', reasons: ['total_refusal', 'canary_mismatch'], mismatch: true }),
    ).toEqual({
      band: 'resisting',
      reasons: ['canary_mismatch', 'total_refusal'],
      floored: false,
    });
    expect(applyCanaryFloor({ band: 'degrading', reasons: ['canary_mismatch'], mismatch: true }).floored).toBe(false);
    expect(applyCanaryFloor({ band: 'stopped', reasons: ['canary_mismatch'], mismatch: true }).band).toBe('stopped');
    expect(applyCanaryFloor({ band: 'healthy', reasons: ['latency'], mismatch: false })).toEqual({
      band: 'healthy',
      reasons: ['latency'],
      floored: false,
    });
  });

  test('configurable: floor to resisting, no floor, reasons left in engine order', () => {
    const strict = canaryPolicySchema().parse({ floorBand: 'resisting' });
    expect(applyCanaryFloor({ band: 'degrading', reasons: ['canary_mismatch'], mismatch: true }, strict)).toMatchObject(
      { band: 'resisting', floored: true },
    );
    const off = canaryPolicySchema().parse({ floorBand: 'none', headReasons: false });
    expect(applyCanaryFloor({ band: 'healthy', reasons: ['latency', 'canary_mismatch'], mismatch: true }, off)).toEqual(
      {
        band: 'healthy',
        reasons: ['latency', 'canary_mismatch'],
        floored: false,
      },
    );
    expect(DEFAULT_CANARY_POLICY).toEqual({ floorBand: 'degrading', headReasons: true });
    expect(canaryPolicySchema().safeParse({ floorBand: 'healthy' }).success).toBe(false);
  });

  test('on a real tick: a perfect score with a canary mismatch is degrading, and the state carries it', () => {
    const baseline = makeWindow({ requests: 10_000, hardBlocks: 10, challenges: 5, softBlocks: 5, p95LatencyMs: 800 });
    const current = makeWindow({
      requests: 500,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 780,
      canary: { runs: 3, failures: 0, mismatches: 1 },
    });
    const assessment = assess({ current, baseline });
    expect(assessment.health.score).toBe(100);
    expect(assessment.reasons).toEqual(['canary_mismatch']);
    const previous = { ...INITIAL_SITE_STATE, band: 'healthy' as const };
    const tick = advanceSiteState(previous, assessment, 60_000);
    expect(tick.band).toBe('healthy');

    const floored = applyCanaryFloorToTick(previous, tick, assessment);
    expect(floored.floored).toBe(true);
    expect(floored.tick).toMatchObject({
      band: 'degrading',
      bandChanged: true,
      state: { band: 'degrading' },
      smoothedScore: tick.smoothedScore,
    });
    expect(floored.reasons[0]).toBe('canary_mismatch');

    // Next tick the canary passes again: the band leaves the floor by the usual hysteresis rule (100 ≥ 83).
    const calm = assess({ current: { ...current, canary: { runs: 3, failures: 0, mismatches: 0 } }, baseline });
    const after = advanceSiteState(floored.tick.state, calm, 60_000);
    const afterFloor = applyCanaryFloorToTick(floored.tick.state, after, calm);
    expect(afterFloor).toMatchObject({ floored: false, tick: { band: 'healthy', bandChanged: true } });
  });
});
