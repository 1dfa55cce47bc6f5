import { INITIAL_SITE_STATE, type RefusalCounts, advanceSiteState, assess, assessTotalRefusal, parseScoringConfig } from '../../../scoring';

const w = (requests: number, hardBlocks: number, challenges = 0, softBlocks = 0): RefusalCounts => ({ requests, hardBlocks, challenges, softBlocks });

describe('total refusal', () => {
  test('fires on the second consecutive refusing tick with enough volume', () => {
    // 90/100 refused = exactly the 90% threshold.
    const first = assessTotalRefusal(w(100, 60, 20, 10), false);
    expect(first).toEqual({ refusedShare: 0.9, enoughVolume: true, refusing: true, streak: 1, totalRefusal: false });
    const second = assessTotalRefusal(w(100, 100), first.streak);
    expect(second.totalRefusal).toBe(true);
    // The previous tick's flag works as well as its streak.
    expect(assessTotalRefusal(w(100, 100), true).totalRefusal).toBe(true);
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
