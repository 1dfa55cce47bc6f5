/**
 * The planner's rules in time: steps paced in time, the effective cost rewritten only when it changes
 * meaningfully, parser alerts after persistence, and "too little current traffic" kept apart from
 * "learning the baseline" (docs/control-loop.md, "Pace: steps per unit of time").
 */
import { initialLoopState, type LoopState } from '../../../core/control/loop-state';
import { type LoopConfig, planTick, type TickPlan } from '../../../core/control/plan';
import { CONFIG, tickAssessmentAt, window } from '../../kit/loop-fixtures';

type Win = ReturnType<typeof window>;

const healthy = (): Win => window(400);
const degrading = (): Win => window(400, { hard: 0.25 }); // −35 → 65
const broken = (): Win => window(400, { missing: 0.5 }); // parser health well below 80
const quiet = (): Win => window(12); // under health.minRequests (50)

function config(tickIntervalMs: number): LoopConfig {
  return { ...CONFIG, tickIntervalMs };
}

/** Ticks every `tickMs` from `fromMs`, the window at each time from `at`; returns every plan. */
function runEvery(
  tickMs: number,
  untilMs: number,
  at: (ms: number) => Win,
  cfg: LoopConfig,
  state: LoopState = initialLoopState('chain'),
  fromMs = 0,
): TickPlan[] {
  const plans: TickPlan[] = [];
  let s = state;
  for (let ms = fromMs; ms <= untilMs; ms += tickMs) {
    const plan = planTick(
      s,
      tickAssessmentAt(s.tick + 1, ms, at(ms), { previousRefusal: s.scoring.refusalStreak }),
      cfg,
    );
    plans.push(plan);
    s = plan.state;
  }
  return plans;
}

const MIN = 60_000;
/** At each whole minute of the run: [minute, concurrency, revisit]. */
function perMinute(plans: TickPlan[]): Array<[number, number, number]> {
  return plans
    .filter((p) => (Date.parse(p.state.lastAssessedAt!) - Date.parse(plans[0]!.state.lastAssessedAt!)) % MIN === 0)
    .map((p) => [
      (Date.parse(p.state.lastAssessedAt!) - Date.parse(plans[0]!.state.lastAssessedAt!)) / MIN,
      p.state.controls!.concurrencyLimit,
      p.state.controls!.revisitMultiplier,
    ]);
}

describe('steps are paced in time, not ticks', () => {
  // Healthy for 10 minutes, degrading from minute 10 to 15 (inclusive), healthy again after that.
  const traffic = (ms: number): Win => (ms < 10 * MIN ? healthy() : ms <= 15 * MIN ? degrading() : healthy());

  test(
    'with 10 s, 30 s, 60 s and 5 min ticks the controls are ' + 'the same after each minute of degrading and restoring',
    () => {
      const byTick = new Map(
        [10_000, 30_000, 60_000, 300_000].map((tickMs) => [
          tickMs,
          perMinute(runEvery(tickMs, 25 * MIN, traffic, config(tickMs))),
        ]),
      );
      const oneMinute = byTick.get(60_000)!;
      // Entering degrading at minute 10 steps at once; then one step a minute: 16→12→9→6→4→3→2 over 5 minutes.
      expect(oneMinute.filter(([m]) => m >= 10 && m <= 15).map(([, c]) => c)).toEqual([12, 9, 6, 4, 3, 2]);
      // Restoring from minute 16: +2 a minute, never in one jump.
      expect(oneMinute.filter(([m]) => m >= 16 && m <= 23).map(([, c]) => c)).toEqual([4, 6, 8, 10, 12, 14, 16, 16]);
      expect(byTick.get(10_000)).toEqual(oneMinute);
      expect(byTick.get(30_000)).toEqual(oneMinute);
      // Ticks five minutes apart look at minutes 0, 5, 10 and 15 of the same traffic — the same controls
      // there, 2 after 5 minutes of degrading (they see the recovery only at minute 20, a tick later).
      expect(byTick.get(300_000)!.filter(([m]) => m <= 15)).toEqual(oneMinute.filter(([m]) => m % 5 === 0 && m <= 15));
    },
  );

  test('a late tick does not catch up: after a 10-minute gap one step, not ten', () => {
    const cfg = config(60_000);
    const entered = runEvery(60_000, 60_000, (ms) => (ms === 0 ? healthy() : degrading()), cfg);
    expect(entered.map((p) => p.state.controls!.concurrencyLimit)).toEqual([16, 12]);
    const late = runEvery(60_000, 11 * MIN, degrading, cfg, entered[1]!.state, 11 * MIN);
    expect(late.map((p) => p.state.controls!.concurrencyLimit)).toEqual([9]);
  });

  test('ticks without a score add no time: no step falls due on what the loop did not see', () => {
    const cfg = config(10_000);
    const start = runEvery(60_000, 0, healthy, cfg)[0]!.state;
    // Degrading from 10 s; 20–50 s without enough traffic (held); evidence again from 60 s. Tick i is at 10 + 10 i s.
    const plans = runEvery(
      10_000,
      120_000,
      (ms) => (ms === 10_000 || ms >= 60_000 ? degrading() : window(20, { hard: 0.25 })),
      cfg,
      start,
      10_000,
    );
    const concurrency = plans.map((p) => p.state.controls!.concurrencyLimit);
    // Entry at 10 s (16→12); the held ticks add nothing, so the next step falls due at 110 s, not 70 s.
    expect(concurrency).toEqual([12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 9, 9]);
    expect(plans.slice(1, 5).every((p) => p.state.score === null && p.change === null)).toBe(true);
  });
});

describe('the effective cost is rewritten only when it changes meaningfully', () => {
  // At the floors (concurrency 1, revisit ×8) a slowly falling score still raises the cost's target
  // (challenges creeping up a point at a time), then a sharp fall.
  const creep = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06].map((c) => (): Win => window(400, { hard: 0.25, challenge: c }));
  const walls = [
    healthy,
    ...Array.from({ length: 8 }, () => degrading),
    ...creep,
    () => window(400, { hard: 0.25, challenge: 0.15 }),
  ];

  const run = (): TickPlan[] => runEvery(MIN, (walls.length - 1) * MIN, (ms) => walls[ms / MIN]!(), config(MIN));

  test('no write while the cost drifts a few per cent; one write when it moves ≥ 10 %', () => {
    const plans = run();
    const atFloors = plans.slice(8);
    expect(
      atFloors.every((p) => p.state.controls!.concurrencyLimit === 1 && p.state.controls!.revisitMultiplier === 8),
    ).toBe(true);
    const changes = atFloors.filter((p) => p.change !== null).map((p) => p.change!.description);
    expect(changes.length).toBeLessThanOrEqual(2);
    // Every write moves the cost by at least 10 % of its value; the last one follows the sharp fall.
    const costs = [
      plans[7]!.state.controls!.effectiveCostMultiplier,
      ...atFloors.filter((p) => p.change !== null).map((p) => p.change!.next.effectiveCostMultiplier),
    ];
    for (let i = 1; i < costs.length; i += 1) expect(costs[i]!).toBeGreaterThanOrEqual(costs[i - 1]! * 1.1);
    expect(last(atFloors).change?.description).toMatch(/^cost ×[\d.]+→×[\d.]+$/);
    // The scores did fall every tick of the creep: only the record stayed put.
    const scores = atFloors.slice(1, 1 + creep.length).map((p) => p.state.score!);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(new Set(scores).size).toBeGreaterThan(3);
  });
});

const last = (plans: TickPlan[]): TickPlan => plans[plans.length - 1]!;

describe('parser alerts need persistence', () => {
  const parserNotices = (plans: TickPlan[]): number[] =>
    plans.flatMap((p, i) => (p.notices.some((n) => n.kind === 'parser_health') ? [i] : []));

  test('one tick below the threshold alerts nobody', () => {
    const blip = (ms: number): Win => (ms === 2 * MIN ? broken() : healthy());
    const plans = runEvery(MIN, 8 * MIN, blip, config(MIN));
    expect(plans[2]!.state.parserHealth).toBeLessThan(80);
    expect(parserNotices(plans)).toEqual([]);
  });

  test('below the threshold for 3 minutes alerts once, at the same time with 10 s and 60 s ticks', () => {
    const breaks = (ms: number): Win => (ms < 2 * MIN ? healthy() : broken());
    for (const tickMs of [10_000, 60_000]) {
      const plans = runEvery(tickMs, 10 * MIN, breaks, config(tickMs));
      const fired = parserNotices(plans);
      expect(fired).toHaveLength(1);
      // Below from minute 2 on; told at minute 5.
      expect((fired[0]! * tickMs) / MIN).toBe(5);
      const notice = plans[fired[0]!]!.notices[0]!;
      expect(notice).toMatchObject({ audience: 'parser_owner' });
      expect(notice.title).toContain(`since ${plans[(2 * MIN) / tickMs]!.state.lastAssessedAt}`);
    }
  });

  test('a tick without a parser score neither extends nor breaks the run; a recovery breaks it', () => {
    // Below at minutes 2 and 3; minute 4 has no parser score (too few extractions); below at 5: alerted.
    const gap = (ms: number): Win =>
      ms < 2 * MIN ? healthy() : ms === 4 * MIN ? window(30, { missing: 0.5 }) : broken();
    const plans = runEvery(MIN, 5 * MIN, gap, config(MIN));
    expect(plans[4]!.state.parserHealth).toBeNull();
    expect(parserNotices(plans)).toEqual([5]);
    // Below at 2 and 3, healthy at 4, below from 5: the run starts again at 5 and is told at 8.
    const recovered = runEvery(
      MIN,
      9 * MIN,
      (ms) => (ms < 2 * MIN || ms === 4 * MIN ? healthy() : broken()),
      config(MIN),
    );
    expect(parserNotices(recovered)).toEqual([8]);
  });
});

describe('too little current traffic is not learning', () => {
  test('a quiet site with a full baseline is held healthy (no score), not shown as learning for hours', () => {
    const plans = runEvery(MIN, 30 * MIN, quiet, config(MIN));
    expect(plans.every((p) => p.state.band === 'healthy' && p.state.score === null)).toBe(true);
    const s = last(plans).state;
    expect(s.noScore).toEqual({
      state: 'insufficient-data',
      detail: 'too little current traffic to judge: 12 requests in the current window, needs 50',
    });
    expect(s.history.map((h) => h.state)).toEqual(Array.from({ length: s.history.length }, () => 'insufficient-data'));
    expect(s.controls).toMatchObject({ concurrencyLimit: 16, revisitMultiplier: 1, paused: false, band: 'healthy' });
    expect(s.controls!.reason).toContain('too little current traffic (12 requests, needs 50)');
    expect(plans.flatMap((p) => p.notices)).toEqual([]);
  });

  test('a new site without a baseline is learning, and says so', () => {
    let s = initialLoopState('chain');
    const plan = planTick(s, tickAssessmentAt(1, 0, quiet(), { baseline: null }), config(MIN));
    s = plan.state;
    expect(s.band).toBe('learning');
    expect(s.noScore).toEqual({ state: 'learning', detail: 'learning the baseline: no baseline yet (new site)' });
  });

  test('a degrading site that goes quiet holds its band and controls; the first score judges it again', () => {
    const traffic = (ms: number): Win =>
      ms === 0 ? healthy() : ms <= 2 * MIN ? degrading() : ms <= 6 * MIN ? quiet() : healthy();
    const plans = runEvery(MIN, 8 * MIN, traffic, config(MIN));
    expect(plans.map((p) => p.state.band)).toEqual([
      'healthy',
      'degrading',
      'degrading',
      'degrading',
      'degrading',
      'degrading',
      'degrading',
      'healthy',
      'healthy',
    ]);
    expect(plans.slice(3, 7).every((p) => p.change === null && p.state.noScore?.state === 'insufficient-data')).toBe(
      true,
    );
    expect(plans[7]!.state.noScore).toBeNull();
  });
});
