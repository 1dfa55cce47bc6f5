import { actionPolicySchema } from '../../../core/control/controls';
import type { Controls } from '../../../core/control/controls';
import type { HealthBand } from '../../../core/common/names';
import type { ReplayTick } from '../../../tools/replay/types';
import { replayTick, type TickOver } from '../../kit/replay-ticks';
import type { ScenarioTruth } from '../../../core/scenarios/truth';
import {
  buildScorecard,
  median,
  routeMatches,
  scoreLoop,
  scoreRule,
  scoreScenario,
} from '../../../tools/backtest/scorecard';
import { formatDuration, formatScorecardJson, formatScorecardText } from '../../../tools/backtest/format';

const POLICY = actionPolicySchema().parse({});
const MIN = 60_000;
const T = (hhmm: string) => `2025-03-14T${hhmm}:00.000Z`;

function truth(
  over: Partial<Omit<ScenarioTruth, 'expect'>> & { expect?: Partial<ScenarioTruth['expect']> } = {},
): ScenarioTruth {
  const { expect: e, ...rest } = over;
  return {
    scenario: 'gradual-hostility',
    site: 'shop.example.com',
    description: 'test',
    cause: 'hard_block',
    expectedTopReason: 'hard_block',
    history: { from: '2025-02-28T00:00:00.000Z', to: '2025-03-14T00:00:00.000Z' },
    incident: { from: '2025-03-14T00:00:00.000Z', to: '2025-03-15T00:00:00.000Z' },
    onset: T('10:00'),
    hardBlocks50At: T('10:30'),
    refused50At: T('10:30'),
    ...rest,
    expect: { pause: true, degrade: true, routeAlert: null, parserAlert: false, ...e },
  };
}

const controls = (band: HealthBand, over: Partial<Controls> = {}): Controls => ({
  concurrencyLimit: band === 'degrading' ? 8 : 16,
  revisitMultiplier: band === 'degrading' ? 2 : 1,
  paused: band === 'resisting',
  canaryOnly: band === 'resisting',
  effectiveCostMultiplier: 1,
  band,
  reason: band,
  ...over,
});

/** A tick with the band's controls unless given (the scorecard reads them). */
const tick = (i: number, asOf: string, o: TickOver = {}): ReplayTick =>
  replayTick(i, asOf, { ...o, controls: o.controls === undefined ? controls(o.band ?? 'healthy') : o.controls });

/** Ticks every 10 minutes from 09:00 to 12:00, with the band given per time (else healthy). */
function day(bands: Record<string, TickOver>): ReplayTick[] {
  const out: ReplayTick[] = [];
  let current: TickOver = {};
  for (let m = 9 * 60, i = 0; m <= 12 * 60; m += 10, i++) {
    const hhmm = `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    if (bands[hhmm]) current = bands[hhmm];
    out.push(tick(i, T(hhmm), current));
  }
  return out;
}

describe('the loop on a scenario', () => {
  test(
    'a degrade 20 minutes before hard blocks pass half and a late pause: ' + 'leads +20m and −10m, onset to pause 40m',
    () => {
      const ticks = day({
        '10:10': { band: 'degrading', reasons: ['hard_block'] },
        '10:40': { band: 'resisting', reasons: ['hard_block'] },
      });
      const s = scoreLoop(truth(), ticks, POLICY);
      expect(s.firstDegradeAt).toBe(T('10:10'));
      expect(s.firstPauseAt).toBe(T('10:40'));
      expect(s.degradeDelayMs).toBe(10 * MIN);
      expect(s.degradeLeadMs).toBe(20 * MIN);
      expect(s.pauseLeadMs).toBe(-10 * MIN);
      expect(s.pauseDelayMs).toBe(40 * MIN);
      expect(s).toMatchObject({
        falseDegrades: 0,
        falsePauses: 0,
        missedDegrade: false,
        missedPause: false,
        topReason: 'hard_block',
        topReasonMatches: true,
      });
    },
  );

  test('a degrade before onset is false; the loop still degraded at onset counts from the first tick at onset', () => {
    const ticks = day({
      '09:50': { band: 'degrading', reasons: ['latency'] },
      '10:20': { band: 'resisting', reasons: ['hard_block'] },
    });
    const s = scoreLoop(truth(), ticks, POLICY);
    expect(s.falseDegrades).toBe(1);
    expect(s.firstFalseAt).toBe(T('09:50'));
    expect(s.firstDegradeAt).toBe(T('10:00'));
    expect(s.falsePauses).toBe(0);
    expect(s.firstPauseAt).toBe(T('10:20'));
  });

  test(
    'in a scenario that should stay quiet every degrade and pause is false, and a missing pause is missed ' +
      'elsewhere',
    () => {
      const quiet = truth({
        cause: 'none',
        expectedTopReason: null,
        onset: null,
        hardBlocks50At: null,
        refused50At: null,
        expect: { pause: false, degrade: false },
      });
      const ticks = day({
        '10:00': { band: 'degrading' },
        '10:20': { band: 'healthy' },
        '11:00': { band: 'resisting' },
      });
      const s = scoreLoop(quiet, ticks, POLICY);
      expect(s).toMatchObject({
        falseDegrades: 2,
        falsePauses: 1,
        firstDegradeAt: null,
        firstPauseAt: null,
        missedPause: false,
        topReasonMatches: null,
      });
      const missed = scoreLoop(truth(), day({ '10:10': { band: 'degrading', reasons: ['hard_block'] } }), POLICY);
      expect(missed).toMatchObject({ missedPause: true, missedDegrade: false, firstPauseAt: null, pauseLeadMs: null });
    },
  );

  test('a pause where only a degrade was due is a false pause, not a false degrade', () => {
    const latency = truth({
      cause: 'latency',
      expectedTopReason: 'latency',
      hardBlocks50At: null,
      expect: { pause: false, degrade: true },
    });
    const s = scoreLoop(latency, day({ '10:30': { band: 'resisting', reasons: ['latency'] } }), POLICY);
    expect(s).toMatchObject({ falseDegrades: 0, falsePauses: 1, degradeDelayMs: 30 * MIN, degradeLeadMs: null });
  });

  test('route alerts: the right route after onset, and spurious ones (before onset, wrong route)', () => {
    const route = truth({
      cause: 'route',
      expectedTopReason: 'route_specific',
      hardBlocks50At: null,
      expect: { pause: false, degrade: false, routeAlert: 'pool=dc-3' },
    });
    const ticks = day({});
    ticks[3] = tick(3, T('09:30'), { notices: ['route_alert'], failingRoutes: ['pool=dc-1'] });
    ticks[7] = tick(7, T('10:10'), {
      notices: ['route_alert'],
      failingRoutes: ['country=US/pool=dc-3'],
      reasons: ['route_specific'],
    });
    ticks[8] = tick(8, T('10:20'), { notices: ['route_alert'], failingRoutes: ['country=BR'] });
    const s = scoreLoop(route, ticks, POLICY);
    expect(s.rightRouteAlertAt).toBe(T('10:10'));
    expect(s.routeAlertDelayMs).toBe(10 * MIN);
    expect(s.spuriousRouteAlerts).toBe(2);
    expect(s.missedRouteAlert).toBe(false);
    expect(s.throttledTicks).toBe(0);
    expect(s.topReason).toBe('route_specific');
    expect(routeMatches(['pool=dc-30'], 'pool=dc-3')).toBe(false);
    // The same alerts in a scenario without a route problem are all spurious.
    expect(scoreLoop(truth(), ticks, POLICY)).toMatchObject({
      spuriousRouteAlerts: 3,
      missedRouteAlert: false,
      rightRouteAlertAt: null,
    });
  });

  test('parser alerts: expected after onset, and whether the site was throttled then', () => {
    const parser = truth({
      cause: 'parser',
      expectedTopReason: 'extraction_empty',
      hardBlocks50At: null,
      expect: { pause: false, degrade: false, parserAlert: true },
    });
    const ticks = day({});
    ticks[8] = tick(8, T('10:20'), {
      notices: ['parser_health'],
      controls: controls('healthy', { concurrencyLimit: 12 }),
      reasons: ['extraction_empty'],
    });
    const s = scoreLoop(parser, ticks, POLICY);
    expect(s).toMatchObject({
      parserAlertAt: T('10:20'),
      parserAlertDelayMs: 20 * MIN,
      parserAlertsWhileThrottled: 1,
      falseParserAlerts: 0,
      missedParserAlert: false,
      throttledTicks: 1,
    });
    expect(scoreLoop(parser, day({}), POLICY).missedParserAlert).toBe(true);
    expect(scoreLoop(truth(), ticks, POLICY).falseParserAlerts).toBe(1);
  });

  test('top reason: weighted by the points each tick is below 100, after onset; ticks with no score', () => {
    const ticks = day({
      '09:00': { reasons: ['challenge'], score: 40 },
      // Two ticks of hard blocks at score 86 (weight 15 each) against eight of one-point noise (weight 2 each).
      '10:00': { reasons: ['hard_block'], score: 86 },
      '10:20': { reasons: ['extraction_empty'], score: 99 },
      '11:40': { reasons: ['latency'], score: null },
    });
    const s = scoreLoop(truth(), ticks, POLICY);
    expect(s.topReason).toBe('hard_block');
    expect(s.topReasonMatches).toBe(true);
    // Parser health counts like the health score: a redesign's extraction reason weighs by it.
    const parser = day({
      '10:00': { reasons: ['latency'], score: 97 },
      '10:30': { reasons: ['extraction_missing_fields'], score: 100 },
    });
    for (const t of parser) if (t.reasons[0] === 'extraction_missing_fields') t.parserHealth = 70;
    expect(scoreLoop(truth({ expectedTopReason: 'extraction_missing_fields' }), parser, POLICY)).toMatchObject({
      topReason: 'extraction_missing_fields',
      topReasonMatches: true,
    });
    // Ties go to the reason seen first; before onset does not count (the challenge at 40 above).
    const tie = day({
      '10:00': { reasons: ['latency'] },
      '10:10': { reasons: ['hard_block'] },
      '10:20': { reasons: [] },
    });
    expect(scoreLoop(truth(), tie, POLICY).topReason).toBe('latency');
    // 11:40 … 12:00: three ticks without a score.
    expect(s.unscoredTicks).toBe(3);
    expect(s.reasonAtFirstDegrade).toBeNull();
    const degraded = day({ '10:10': { band: 'degrading', reasons: ['total_refusal', 'soft_block'] } });
    expect(scoreLoop(truth(), degraded, POLICY).reasonAtFirstDegrade).toBe('soft_block');
  });
});

test('product rules heading the reasons (total_refusal) are not causes: the cause after them counts', () => {
  const ticks = day({ '10:10': { band: 'resisting', reasons: ['total_refusal', 'challenge', 'soft_block'] } });
  const s = scoreLoop(truth({ cause: 'challenge', expectedTopReason: 'challenge' }), ticks, POLICY);
  expect(s).toMatchObject({ topReason: 'challenge', topReasonMatches: true, reasonAtFirstDegrade: 'challenge' });
  const onlyRule = day({ '10:10': { band: 'resisting', reasons: ['total_refusal'] } });
  expect(scoreLoop(truth(), onlyRule, POLICY)).toMatchObject({ topReason: null, topReasonMatches: false });
});

describe('reference rules against the truth', () => {
  const rule = (episodes: Array<[string, string | null]>) => ({
    rule: 'r',
    episodes: episodes.map(([f, c]) => ({
      firedAt: Date.parse(T(f)),
      clearedAt: c === null ? null : Date.parse(T(c)),
    })),
  });

  test('first firing after onset, its lead, and earlier firings as false alarms', () => {
    const r = scoreRule(
      truth(),
      rule([
        ['09:10', '09:20'],
        ['10:05', null],
      ]),
    );
    expect(r).toMatchObject({
      alertAt: T('10:05'),
      delayMs: 5 * MIN,
      leadMs: 25 * MIN,
      falseAlarms: 1,
      missed: false,
      expected: true,
    });
  });

  test('a rule still firing at onset alerts at the first minute after it (and its episode was a false alarm)', () => {
    const truthOffMinute = truth({ onset: '2025-03-14T10:00:30.000Z' });
    const r = scoreRule(truthOffMinute, rule([['09:50', null]]));
    expect(r).toMatchObject({ alertAt: T('10:01'), falseAlarms: 1 });
  });

  test('no alert due: every firing is false; never firing where one was due is a miss', () => {
    const quiet = truth({ onset: null, hardBlocks50At: null, expect: { pause: false, degrade: false } });
    expect(
      scoreRule(
        quiet,
        rule([
          ['09:10', '09:20'],
          ['11:00', null],
        ]),
      ),
    ).toMatchObject({ falseAlarms: 2, missed: false, alertAt: null });
    const routeOnly = truth({ expect: { pause: false, degrade: false, routeAlert: 'pool=a' } });
    expect(scoreRule(routeOnly, rule([['10:05', null]]))).toMatchObject({
      falseAlarms: 1,
      expected: false,
      missed: false,
    });
    expect(scoreRule(truth(), rule([]))).toMatchObject({ missed: true, alertAt: null, falseAlarms: 0 });
  });
});

describe('overall', () => {
  test('missed and false pauses, spurious route alerts and median leads across scenarios; printed and as JSON', () => {
    const a = scoreScenario(
      truth({ scenario: 'a' }),
      day({ '10:10': { band: 'degrading', reasons: ['hard_block'] }, '10:40': { band: 'resisting' } }),
      [],
      POLICY,
    );
    const b = scoreScenario(
      truth({ scenario: 'b' }),
      day({ '10:20': { band: 'degrading', reasons: ['hard_block'] } }),
      [],
      POLICY,
    );
    const quietTicks = day({ '09:30': { band: 'resisting' } });
    quietTicks[1] = tick(1, T('09:10'), { notices: ['route_alert'], failingRoutes: ['pool=x'] });
    const c = scoreScenario(
      truth({
        scenario: 'c',
        cause: 'none',
        onset: null,
        hardBlocks50At: null,
        expectedTopReason: null,
        expect: { pause: false, degrade: false },
      }),
      quietTicks,
      [{ rule: 'success<40%', episodes: [{ firedAt: Date.parse(T('09:00')), clearedAt: null }] }],
      POLICY,
    );
    const card = buildScorecard([a, b, c]);
    expect(card.overall).toMatchObject({
      scenarios: 3,
      missedPauses: 1,
      falsePauses: 1,
      falseDegrades: 1,
      spuriousRouteAlerts: 1,
      // Leads: a 20m, b 10m.
      medianDegradeLeadMs: 15 * MIN,
      medianPauseLeadMs: -10 * MIN,
      topReasonMatches: 2,
      topReasonJudged: 2,
    });
    expect(card.overall.loopAsAlert).toMatchObject({
      expected: 2,
      detected: 2,
      missed: 0,
      falseAlarms: 1,
      medianDelayMs: 15 * MIN,
    });
    expect(card.overall.rules).toEqual([
      {
        rule: 'success<40%',
        expected: 0,
        detected: 0,
        missed: 0,
        falseAlarms: 1,
        medianDelayMs: null,
        medianLeadMs: null,
      },
    ]);

    const result = { scorecard: card, timings: [], tickMs: 60_000, totalMs: 1234 };
    const text = formatScorecardText(result);
    expect(text).toMatch(/^a +hard_block +\+10m +\+40m +20m +−10m +0 /m);
    expect(text).toMatch(/^b +hard_block +\+20m +missed +10m +– +0 /m);
    expect(text).toMatch(/1 missed pauses, 1 false pauses, 1 false degrades, 1 spurious route alerts/);
    expect(JSON.parse(formatScorecardJson(result))).toEqual(JSON.parse(JSON.stringify(result)));
  });

  test('durations and medians', () => {
    expect([
      formatDuration(45_000),
      formatDuration(4 * MIN),
      formatDuration(65 * MIN),
      formatDuration(-12 * MIN),
    ]).toEqual(['45s', '4m', '1h05m', '−12m']);
    expect([median([]), median([3, 1, 2]), median([4, 1, 3, 2])]).toEqual([null, 2, 2.5]);
  });
});
