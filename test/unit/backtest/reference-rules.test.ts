import {
  BURN_RATE_RULE,
  CHALLENGE_THRESHOLD_RULE,
  LOW_SUCCESS_RULE,
  MINUTE_MS,
  RULES_LOOKBACK_MS,
  evaluateReferenceRules,
  type MinuteCounts,
} from '../../../tools/backtest/reference-rules';

const DAY_START = Date.parse('2025-03-14T00:00:00.000Z');
const at = (minutes: number) => DAY_START + minutes * MINUTE_MS;

/** Minutes [fromMin, toMin) relative to DAY_START, each built by `f(minute index)`. */
function series(
  fromMin: number,
  toMin: number,
  f: (m: number) => Partial<MinuteCounts> & { requests: number },
): MinuteCounts[] {
  const out: MinuteCounts[] = [];
  for (let m = fromMin; m < toMin; m++)
    out.push({ minute: at(m), hardBlocks: 0, challenges: 0, softBlocks: 0, errors: 0, ...f(m) });
  return out;
}

const episodesOf = (name: string, firings: ReturnType<typeof evaluateReferenceRules>) =>
  firings.find((f) => f.rule === name)!.episodes;

describe('reference rules', () => {
  // A day at 40 requests a minute, all fine, then a wall of 403s from 10:00 (minute 600) on.
  const onsetMin = 600;
  const wall = series(-RULES_LOOKBACK_MS / MINUTE_MS, 1440, (m) => ({
    requests: 40,
    hardBlocks: m >= onsetMin ? 40 : 0,
  }));
  const firings = evaluateReferenceRules(wall, { from: at(0), to: at(1440) });

  test('success < 40 % over 5 minutes fires once 4 of the last 5 minutes are blocked', () => {
    // 3 blocked minutes leave exactly 40 % success: not below 40 %.
    expect(episodesOf(LOW_SUCCESS_RULE.name, firings)).toEqual([{ firedAt: at(onsetMin + 4), clearedAt: null }]);
  });

  test(
    'burn rate (SLO 95 %) fires when the 1 h failure rate ' + 'passes 72 % (14.4× the 5 % budget): after 44 minutes',
    () => {
      // 43/60 = 71.7 % is not above 72 %; 44/60 = 73.3 % is. The 6 h pair would need 109 minutes.
      expect(episodesOf(BURN_RATE_RULE.name, firings)).toEqual([{ firedAt: at(onsetMin + 44), clearedAt: null }]);
    },
  );

  test('hard blocks never fire the challenge threshold', () => {
    expect(episodesOf(CHALLENGE_THRESHOLD_RULE.name, firings)).toEqual([]);
  });

  test(
    'a site that always challenges 8 % fires the challenge threshold all day: ' + 'one episode from the first minute',
    () => {
      const always = series(-10, 1440, () => ({ requests: 50, challenges: 4 }));
      const f = evaluateReferenceRules(always, { from: at(0), to: at(1440) }, [CHALLENGE_THRESHOLD_RULE]);
      expect(episodesOf(CHALLENGE_THRESHOLD_RULE.name, f)).toEqual([{ firedAt: at(0), clearedAt: null }]);
    },
  );

  test('exactly 5 % challenges is not above 5 %', () => {
    const f = evaluateReferenceRules(
      series(-10, 60, () => ({ requests: 40, challenges: 2 })),
      { from: at(0), to: at(60) },
      [CHALLENGE_THRESHOLD_RULE],
    );
    expect(episodesOf(CHALLENGE_THRESHOLD_RULE.name, f)).toEqual([]);
  });

  test('an episode clears at the first minute the condition no longer holds', () => {
    // Challenges on minutes 100..109 only: the trailing 5-minute window sees them from t = 101 to t = 114.
    const wave = series(0, 200, (m) => ({ requests: 40, challenges: m >= 100 && m < 110 ? 10 : 0 }));
    const f = evaluateReferenceRules(wave, { from: at(0), to: at(200) }, [CHALLENGE_THRESHOLD_RULE]);
    // At t=101 one minute of 10/40 in 200 requests = 5 % (not above); at t=102 20/200 = 10 %.
    // At t=114 the window [109,114) holds one wave minute: 10/200 = 5 % → cleared.
    expect(episodesOf(CHALLENGE_THRESHOLD_RULE.name, f)).toEqual([{ firedAt: at(102), clearedAt: at(114) }]);
  });

  test('too little traffic in a window is not judged, however bad it is (fewer than 20 requests)', () => {
    // 3 requests a minute, all blocked: 15 in 5 minutes is too few for the 5-minute rules; the burn
    // rate's 6 h / 30 min pair has 90 requests in its short window and fires.
    const quiet = series(-400, 600, () => ({ requests: 3, hardBlocks: 3, challenges: 0 }));
    const f = evaluateReferenceRules(quiet, { from: at(0), to: at(600) });
    expect(episodesOf(LOW_SUCCESS_RULE.name, f)).toEqual([]);
    expect(episodesOf(BURN_RATE_RULE.name, f)).toEqual([{ firedAt: at(0), clearedAt: null }]);
    // 1 request every 2 minutes: 15 in the 30-minute window, too few for the burn rate as well.
    const quieter = series(-400, 600, (m) => ({ requests: m % 2 === 0 ? 1 : 0, hardBlocks: m % 2 === 0 ? 1 : 0 }));
    for (const r of evaluateReferenceRules(quieter, { from: at(0), to: at(600) })) expect(r.episodes).toEqual([]);
  });

  test('missing minutes count as no traffic', () => {
    // Only every other minute has traffic: a 5-minute window holds 2 or 3 minutes of 10 requests.
    const sparse = series(-10, 100, (m) => ({
      requests: m % 2 === 0 ? 10 : 0,
      hardBlocks: m % 2 === 0 ? 10 : 0,
    })).filter((m) => m.requests > 0);
    const f = evaluateReferenceRules(sparse, { from: at(0), to: at(100) }, [LOW_SUCCESS_RULE]);
    // Windows with 3 traffic minutes (30 requests) are judged, windows with 2 (20 requests) too: all blocked.
    expect(episodesOf(LOW_SUCCESS_RULE.name, f)).toEqual([{ firedAt: at(0), clearedAt: null }]);
    const sparser = sparse.filter((m) => ((m.minute - DAY_START) / MINUTE_MS) % 4 === 0);
    // Now a 5-minute window holds at most 2 traffic minutes = 20 requests, sometimes 1 = 10: episodes break.
    const g = evaluateReferenceRules(sparser, { from: at(0), to: at(20) }, [LOW_SUCCESS_RULE]);
    expect(episodesOf(LOW_SUCCESS_RULE.name, g).length).toBeGreaterThan(1);
  });

  test(
    'errors count against success; ' + 'the burn rate uses the 6 h / 30 min pair for a slower, lower failure rate',
    () => {
      // 40 % of requests fail with errors from minute 600: above 30 % (6×) but below 72 % (14.4×).
      const slow = series(-360, 1440, (m) => ({ requests: 100, errors: m >= 600 ? 40 : 0 }));
      const f = evaluateReferenceRules(slow, { from: at(0), to: at(1440) }, [BURN_RATE_RULE, LOW_SUCCESS_RULE]);
      // 6 h failure rate > 30 %: k·40/(360·100) > 0.3 → k > 270 minutes.
      expect(episodesOf(BURN_RATE_RULE.name, f)).toEqual([{ firedAt: at(600 + 271), clearedAt: null }]);
      // 60 % success is not below 40 %.
      expect(episodesOf(LOW_SUCCESS_RULE.name, f)).toEqual([]);
    },
  );
});
