/**
 * Majority refusal: half the traffic refused, at least 4× the site's normal share, on two consecutive
 * ticks, judged on the current or the recent window — beside the seed's score, which it never changes.
 */
import { assess, healthScore, makeWindow } from '../../../core/scoring';
import { parseScoringConfig } from '../../../core/scoring/config';
import { assessMajorityRefusal } from '../../../core/scoring/majority-refusal';

const counts = (requests: number, refused: number) => ({ requests, hardBlocks: refused, challenges: 0, softBlocks: 0 });
/** Normal for this site: 2 % refused. */
const BASELINE = counts(10_000, 200);

describe('assessMajorityRefusal', () => {
  test('half refused on two consecutive ticks fires; one tick does not', () => {
    const first = assessMajorityRefusal(counts(200, 100), null, BASELINE, 0);
    expect(first).toMatchObject({ refusingWindow: 'current', streak: 1, majorityRefusal: false, normalShare: 0.02 });
    const second = assessMajorityRefusal(counts(200, 100), null, BASELINE, first.streak);
    expect(second).toMatchObject({ streak: 2, majorityRefusal: true });
  });

  test('just under half is not a majority', () => {
    expect(assessMajorityRefusal(counts(200, 99), null, BASELINE, 5)).toMatchObject({
      refusingWindow: null,
      streak: 0,
      majorityRefusal: false,
    });
  });

  test('the recent window sees an abrupt wall before the current one does', () => {
    // 15 minutes: 10 normal (2 %), the last 5 a wall (97 %): the current window is at 34 %, the recent at 97 %.
    const current = { requests: 600, hardBlocks: 8 + 194, challenges: 0, softBlocks: 0 };
    const recent = counts(200, 194);
    const r = assessMajorityRefusal(current, recent, BASELINE, 1);
    expect(r.currentShare).toBeCloseTo(202 / 600, 12);
    expect(r).toMatchObject({ refusingWindow: 'recent', majorityRefusal: true });
  });

  test('a site whose normal is a third refused needs 4× its normal: more than it can refuse', () => {
    const strict = counts(10_000, 3_300);
    // 60 % refused is 1.8× normal: not a majority refusal for this site.
    expect(assessMajorityRefusal(counts(200, 120), null, strict, 1)).toMatchObject({
      refusingWindow: null,
      majorityRefusal: false,
    });
    // A site normally at 15 %: the bar is 60 %.
    const choosy = counts(10_000, 1_500);
    expect(assessMajorityRefusal(counts(200, 118), null, choosy, 1).refusingWindow).toBeNull();
    expect(assessMajorityRefusal(counts(200, 120), null, choosy, 1).majorityRefusal).toBe(true);
  });

  test('without a baseline there is no normal to compare with: it never fires', () => {
    expect(assessMajorityRefusal(counts(200, 200), counts(100, 100), null, 9)).toMatchObject({
      normalShare: null,
      majorityRefusal: false,
    });
  });

  test('a tick without enough volume in either window neither extends nor breaks the streak', () => {
    const quiet = assessMajorityRefusal(counts(30, 30), counts(10, 10), BASELINE, 1);
    expect(quiet).toMatchObject({ enoughVolume: false, streak: 1, majorityRefusal: false });
    expect(assessMajorityRefusal(counts(30, 30), counts(10, 10), BASELINE, 2).majorityRefusal).toBe(true);
  });

  test('thresholds, ticks, volumes and the switch come from the configuration', () => {
    const config = parseScoringConfig({
      majorityRefusal: { threshold: 0.7, consecutiveTicks: 3, minRecentRequests: 10 },
    }).majorityRefusal;
    expect(assessMajorityRefusal(counts(200, 130), null, BASELINE, 5, config).refusingWindow).toBeNull();
    expect(assessMajorityRefusal(counts(20, 2), counts(10, 8), BASELINE, 1, config)).toMatchObject({
      refusingWindow: 'recent',
      streak: 2,
      majorityRefusal: false,
    });
    const off = parseScoringConfig({ majorityRefusal: { enabled: false } }).majorityRefusal;
    expect(assessMajorityRefusal(counts(200, 150), null, BASELINE, 5, off)).toMatchObject({
      streak: 6,
      majorityRefusal: false,
    });
  });
});

describe('in the assessment', () => {
  const baseline = makeWindow({ ...BASELINE, p95LatencyMs: 400, routes: [] });
  const wall = makeWindow({
    requests: 400,
    hardBlocks: 388,
    challenges: 0,
    softBlocks: 0,
    p95LatencyMs: 400,
    recent: { ...counts(200, 194), routes: [] },
  });

  test("a 97 % wall of 403s: the score stays the seed's (65), the rule makes the reason", () => {
    const first = assess({ current: wall, baseline, previous: {} });
    const second = assess({
      current: wall,
      baseline,
      previousRefusal: first.totalRefusal.streak,
      previous: first.carry ?? {},
    });
    // The seed's score, untouched: hard blocks capped at 35 points.
    expect(second.health.score).toBe(healthScore(wall, baseline).score);
    expect(second.health.score).toBe(65);
    // 97 % is also over the total-refusal bar (90 %): that reason wins, majority refusal is implied.
    expect(second.reasons[0]).toBe('total_refusal');
    expect(second.majorityRefusal?.majorityRefusal).toBe(true);
  });

  test('an 80 % wave of challenges and soft blocks is a majority refusal (and not a total one)', () => {
    const wave = makeWindow({
      requests: 400,
      hardBlocks: 8,
      challenges: 220,
      softBlocks: 100,
      p95LatencyMs: 400,
      recent: { requests: 130, hardBlocks: 2, challenges: 72, softBlocks: 30, routes: [] },
    });
    const first = assess({ current: wave, baseline, previous: {} });
    expect(first.reasons).not.toContain('majority_refusal');
    const second = assess({
      current: wave,
      baseline,
      previousRefusal: first.totalRefusal.streak,
      previous: first.carry ?? {},
    });
    expect(second.totalRefusal.totalRefusal).toBe(false);
    expect(second.reasons[0]).toBe('majority_refusal');
    expect(second.health.score).toBe(healthScore(wave, baseline).score);
  });

  test('a failing route is set aside before the share is taken, from the first tick', () => {
    // Pool "dead" carries half the traffic (not more: then it would be the site's doing) and refuses
    // everything: 51 % refused overall, over the bar. It is the route's doing, so the rule judges pools
    // a and b alone (2 %) on every tick — also before the route alert is confirmed.
    const routes = [
      { pool: 'a', requests: 250, hardBlocks: 5, challenges: 0, softBlocks: 0 },
      { pool: 'b', requests: 250, hardBlocks: 5, challenges: 0, softBlocks: 0 },
      { pool: 'dead', requests: 500, hardBlocks: 500, challenges: 0, softBlocks: 0 },
    ];
    const current = makeWindow({
      requests: 1000,
      hardBlocks: 510,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 400,
      routes,
      recent: { requests: 1000, hardBlocks: 510, challenges: 0, softBlocks: 0, routes },
    });
    let carry = {};
    let streak = 0;
    for (let i = 0; i < 3; i++) {
      const a = assess({
        current,
        baseline,
        previousRefusal: streak,
        previous: carry,
        at: Date.UTC(2026, 0, 1, 12, i),
      });
      expect(a.majorityRefusal?.currentShare).toBeCloseTo(10 / 500, 12);
      expect(a.majorityRefusal?.majorityRefusal).toBe(false);
      carry = a.carry ?? {};
      streak = a.totalRefusal.streak;
    }
    // Without the route split the same traffic would be a majority refusal.
    const unlabelled = makeWindow({ requests: 1000, hardBlocks: 510, challenges: 0, softBlocks: 0, p95LatencyMs: 400 });
    const first = assess({ current: unlabelled, baseline, previous: {} });
    expect(
      assess({ current: unlabelled, baseline, previous: first.carry ?? {} }).majorityRefusal?.majorityRefusal,
    ).toBe(true);
  });
});
