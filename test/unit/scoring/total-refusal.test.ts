import {
  INITIAL_SITE_STATE,
  type RefusalCounts,
  advanceSiteState,
  assess,
  assessTotalRefusal,
  parseScoringConfig,
} from '../../../core/scoring';

const w = (requests: number, hardBlocks: number, challenges = 0, softBlocks = 0): RefusalCounts => ({
  requests,
  hardBlocks,
  challenges,
  softBlocks,
});

describe('total refusal', () => {
  test('fires on the second consecutive refusing tick with enough volume', () => {
    // 90/100 refused = exactly the 90% threshold.
    const first = assessTotalRefusal(w(100, 60, 20, 10), false);
    expect(first).toEqual({
      refusedShare: 0.9,
      recentRefusedShare: null,
      refusingWindow: 'current',
      enoughVolume: true,
      refusing: true,
      streak: 1,
      totalRefusal: false,
    });
    const second = assessTotalRefusal(w(100, 100), first.streak);
    expect(second.totalRefusal).toBe(true);
    // The previous tick's flag works as well as its streak.
    expect(assessTotalRefusal(w(100, 100), true).totalRefusal).toBe(true);
  });

  test("says which window refused: the recent one alone, with its own share (not the current window's)", () => {
    // The current window (200 requests) is 67.5% refused; its last minutes (60 requests) 95%.
    const r = assessTotalRefusal(w(200, 135), 18, undefined, w(60, 57));
    expect(r).toMatchObject({ refusing: true, streak: 19, totalRefusal: true, refusingWindow: 'recent' });
    expect(r.refusedShare).toBeCloseTo(0.675, 9);
    expect(r.recentRefusedShare).toBeCloseTo(0.95, 9);
    // Both refusing: the current window is the one shown. Too few recent requests: no recent share.
    expect(assessTotalRefusal(w(200, 190), 1, undefined, w(60, 60)).refusingWindow).toBe('current');
    expect(assessTotalRefusal(w(200, 190), 1, undefined, w(10, 10))).toMatchObject({
      recentRefusedShare: null,
      refusingWindow: 'current',
    });
    expect(assessTotalRefusal(w(200, 20), 1, undefined, w(60, 6))).toMatchObject({
      refusing: false,
      refusingWindow: null,
    });
  });

  test('89% refused is not refusing, and breaks the streak', () => {
    const r = assessTotalRefusal(w(100, 89), 1);
    expect(r.refusing).toBe(false);
    expect(r.streak).toBe(0);
    expect(r.totalRefusal).toBe(false);
  });

  test('a tick with too few requests neither counts nor resets the streak', () => {
    const low = assessTotalRefusal(w(49, 49), 1);
    expect(low).toMatchObject({ enoughVolume: false, refusing: false, streak: 1, totalRefusal: false });
    expect(assessTotalRefusal(w(0, 0), 2)).toMatchObject({ refusedShare: 0, streak: 2, totalRefusal: true });
  });

  test('configurable: threshold, ticks in a row, and off switch', () => {
    const strict = parseScoringConfig({ totalRefusal: { threshold: 0.99, consecutiveTicks: 3 } }).totalRefusal;
    expect(assessTotalRefusal(w(100, 95), 5, strict).refusing).toBe(false);
    expect(assessTotalRefusal(w(100, 100), 1, strict).totalRefusal).toBe(false); // streak 2 of 3
    expect(assessTotalRefusal(w(100, 100), 2, strict).totalRefusal).toBe(true);
    const off = parseScoringConfig({ totalRefusal: { enabled: false } }).totalRefusal;
    expect(assessTotalRefusal(w(100, 100), 10, off)).toMatchObject({ refusing: true, totalRefusal: false });
  });

  test('a site answering every request with 403 scores 65 yet ends up resisting, with reason total_refusal', () => {
    const baseline = { requests: 10_000, hardBlocks: 100, challenges: 0, softBlocks: 0, p95LatencyMs: 200 };
    const current = { requests: 200, hardBlocks: 200, challenges: 0, softBlocks: 0, p95LatencyMs: 200 };
    const first = assess({ current, baseline, previousRefusal: INITIAL_SITE_STATE.refusalStreak });
    // hb 1.0 - 0.01 = 0.99 → capped → 35; 100 - 35 = 65: the seed's score is untouched.
    expect(first.health.score).toBe(65);
    expect(first.reasons).toEqual(['hard_block']);
    const t1 = advanceSiteState(INITIAL_SITE_STATE, first, 60_000);
    expect(t1.band).toBe('degrading');
    const second = assess({ current, baseline, previousRefusal: t1.state.refusalStreak });
    expect(second.health.score).toBe(65);
    expect(second.reasons).toEqual(['total_refusal', 'hard_block']);
    expect(advanceSiteState(t1.state, second, 60_000).band).toBe('resisting');
  });
});
