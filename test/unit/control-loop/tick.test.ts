import { initialLoopState, type LoopState } from '../../../core/control/loop-state';
import { planTick, type TickPlan } from '../../../core/control/plan';
import { CONFIG, POLICY, SITE, carried, tickAssessment, window } from '../../kit/loop-fixtures';

const healthy = () => window(400);
const degrading = () => window(400, { hard: 0.25 }); // hard blocks 25% vs 0.5%: −35 → 65
const resisting = () => window(400, { hard: 0.25, challenge: 0.25, soft: 0.25 }); // −85 → 15

/** Runs windows through planTick from `state`, one tick a minute; returns every plan. */
function run(windows: ReturnType<typeof window>[], state: LoopState = initialLoopState('chain')): TickPlan[] {
  const plans: TickPlan[] = [];
  let s = state;
  for (const w of windows) {
    const plan = planTick(s, tickAssessment(s.tick + 1, w, carried(s)), CONFIG);
    plans.push(plan);
    s = plan.state;
  }
  return plans;
}
const last = (plans: TickPlan[]) => plans[plans.length - 1]!;

describe('planTick: bands and actions', () => {
  test('the first tick writes the nominal controls; a healthy site after that changes nothing', () => {
    const plans = run([healthy(), healthy(), healthy()]);
    expect(plans[0]!.state.band).toBe('healthy');
    expect(plans[0]!.change?.next).toMatchObject({
      concurrencyLimit: 16,
      revisitMultiplier: 1,
      paused: false,
      canaryOnly: false,
      effectiveCostMultiplier: 1,
      band: 'healthy',
    });
    expect(plans.slice(1).map((p) => p.change)).toEqual([null, null]);
    expect(plans.flatMap((p) => p.notices)).toEqual([]);
  });

  test('degrading: one throttle step per tick while the band holds, down to the floors; owner notified once', () => {
    const plans = run([healthy(), ...Array.from({ length: 10 }, degrading)]);
    const degradingPlans = plans.slice(1);
    expect(degradingPlans.every((p) => p.state.band === 'degrading')).toBe(true);
    const concurrency = degradingPlans.map((p) => p.state.controls!.concurrencyLimit);
    expect(concurrency).toEqual([12, 9, 6, 4, 3, 2, 1, 1, 1, 1]);
    const revisit = degradingPlans.map((p) => p.state.controls!.revisitMultiplier);
    expect(revisit).toEqual([1.5, 2.25, 3.38, 5.07, 7.61, 8, 8, 8, 8, 8]);
    // Effective cost raised with the score (≈ 100 / 65), never jittering down within the band.
    const cost = degradingPlans.map((p) => p.state.controls!.effectiveCostMultiplier);
    expect(cost[0]).toBeGreaterThan(1.4);
    expect(cost).toEqual([...cost].sort((a, b) => a - b));
    // At the floors nothing changes any more: no write, no audit row.
    expect(degradingPlans.slice(7).map((p) => p.change)).toEqual([null, null, null]);
    // The route diagnosis goes with each change.
    expect(degradingPlans[0]!.change!.routeDiagnosis).toMatchObject({ verdict: 'site-wide' });
    const notices = plans.flatMap((p) => p.notices);
    expect(notices.map((n) => [n.kind, n.audience])).toEqual([['degrading', 'owner']]);
    expect(notices[0]!.evidence.signals.find((s) => s.signal === 'hard_block')).toMatchObject({
      now: 0.25,
      baseline: 0.005,
    });
  });

  test('a tick without a score (too few requests) holds the controls: no step without evidence', () => {
    const plans = run([healthy(), degrading(), degrading(), window(20, { hard: 0.25 }), window(20), degrading()]);
    expect(plans.map((p) => p.state.band)).toEqual([
      'healthy',
      'degrading',
      'degrading',
      'degrading',
      'degrading',
      'degrading',
    ]);
    expect(plans.map((p) => p.state.controls!.concurrencyLimit)).toEqual([16, 12, 9, 9, 9, 6]);
    expect(plans.slice(3, 5).map((p) => p.change)).toEqual([null, null]);
  });

  test('healthy again: restored step by step (AIMD), never in one jump, then left alone', () => {
    const plans = run([healthy(), ...Array.from({ length: 7 }, degrading), ...Array.from({ length: 16 }, healthy)]);
    const restoring = plans.slice(8);
    expect(restoring.every((p) => p.state.band === 'healthy')).toBe(true);
    const concurrency = restoring.map((p) => p.state.controls!.concurrencyLimit);
    expect(concurrency.slice(0, 9)).toEqual([3, 5, 7, 9, 11, 13, 15, 16, 16]);
    const revisit = restoring.map((p) => p.state.controls!.revisitMultiplier);
    expect(revisit.slice(0, 3)).toEqual([7.5, 7, 6.5]);
    expect(last(plans).state.controls).toMatchObject({
      concurrencyLimit: 16,
      revisitMultiplier: 1,
      effectiveCostMultiplier: 1,
    });
    expect(last(plans).change).toBeNull();
    expect(plans.slice(8).flatMap((p) => p.notices)).toEqual([]);
  });

  test('resisting: paused, canaries only, waiting for a person, notified with the evidence', () => {
    const plans = run([healthy(), healthy(), resisting()]);
    const p = last(plans);
    expect(p.state.band).toBe('resisting');
    expect(p.change!.next).toMatchObject({ paused: true, canaryOnly: true, band: 'resisting' });
    expect(p.state.awaiting).toMatchObject({
      kind: 'resisting',
      since: p.state.lastAssessedAt,
      assessmentKey: `${SITE}/chain/3`,
      remindersSent: 0,
    });
    const [notice] = p.notices;
    expect(notice).toMatchObject({ kind: 'resisting', severity: 'critical', audience: 'owner' });
    expect(notice!.evidence).toMatchObject({
      score: 15,
      band: 'resisting',
      reasons: expect.arrayContaining(['hard_block', 'challenge', 'soft_block']),
    });
    expect(notice!.evidence.smoothedScore).toBeLessThan(50);
    expect(notice!.evidence.recentHistory.map((h) => h.tick)).toEqual([1, 2, 3]);
    expect(notice!.evidence.signals.map((s) => s.signal)).toEqual(
      expect.arrayContaining(['hard_block', 'challenge', 'soft_block', 'latency']),
    );
    expect(notice!.text).toContain('target-health decide resume');
  });

  test('while waiting: assessing goes on, reminders at the interval, no action of its own whatever the score', () => {
    const paused = last(run([healthy(), resisting()])).state;
    // Four more minutes: worse, healthy, worse, healthy. Reminder interval 3 minutes.
    const plans = run([resisting(), healthy(), resisting(), healthy(), resisting()], paused);
    expect(plans.map((p) => p.change)).toEqual([null, null, null, null, null]);
    expect(plans.every((p) => p.state.band === 'resisting' && p.state.awaiting !== null)).toBe(true);
    expect(plans.map((p) => p.state.tick)).toEqual([3, 4, 5, 6, 7]);
    const reminders = plans.map((p) => p.notices.map((n) => n.kind));
    expect(reminders).toEqual([[], [], ['reminder'], [], []]);
    expect(last(plans).state.awaiting).toMatchObject({ remindersSent: 1 });
    // The score keeps moving while paused (that is what the person looks at).
    expect(plans[1]!.state.score).toBe(100);
    expect(plans[1]!.state.scoredBand).not.toBe('resisting');
    expect(POLICY.reminderIntervalMs).toBe(180_000);
  });

  test(
    'total refusal: 90% refused on two ticks makes the ' + 'site resisting although the score alone says degrading',
    () => {
      const refusing = () => window(400, { hard: 0.95 });
      const plans = run([healthy(), refusing(), refusing()]);
      expect(plans[1]!.state.band).toBe('degrading');
      expect(last(plans).state.score).toBe(65);
      expect(last(plans).state.band).toBe('resisting');
      expect(last(plans).state.reasons[0]).toBe('total_refusal');
      // Every word of the pause names the rule, so a score of 65 does not contradict "resisting = below 50".
      const smoothed = last(plans).state.smoothedScore;
      const phrase = `resisting: paused by the total-refusal rule; score 65, smoothed ${smoothed}`;
      expect(last(plans).change!.next.reason).toMatch(new RegExp(`^${phrase}; reasons total_refusal, hard_block`));
      expect(last(plans).state.awaiting!.reason).toBe(`paused at tick 3: ${last(plans).change!.next.reason}`);
      expect(last(plans).notices.find((n) => n.kind === 'resisting')!.title).toBe(
        `${SITE} is ${phrase} — canaries only, waiting for your decision`,
      );
    },
  );

  test('a parser break lowers parser health only: parser owner notified once it persisted, no throttling', () => {
    const broken = () => window(400, { missing: 0.5 });
    const plans = run([healthy(), ...Array.from({ length: 6 }, broken)]);
    expect(plans.slice(1).every((p) => p.state.band === 'healthy' && p.change === null)).toBe(true);
    expect(plans[1]!.state.parserHealth).toBeLessThan(80);
    expect(plans[1]!.state.score).toBe(100);
    // Below 80 from tick 2 on; told on tick 5, when it has been below for 3 minutes (parserAlertAfterMs).
    expect(plans.map((p) => p.notices.map((n) => [n.kind, n.audience]))).toEqual([
      [],
      [],
      [],
      [],
      [['parser_health', 'parser_owner']],
      [],
      [],
    ]);
    // Recovers, then breaks again: alerted again once that persisted (the alert re-armed at threshold + 3).
    const again = run([healthy(), ...Array.from({ length: 4 }, broken)], last(plans).state);
    expect(again.map((p) => p.notices.map((n) => n.kind))).toEqual([[], [], [], [], ['parser_health']]);
  });

  test('a route-specific failure leaves the band alone and raises one route alert once confirmed', () => {
    // Pool "c" (7% of the traffic) refuses everything; pools a and b are fine. Until it is confirmed its
    // refusals count in the score (88: still healthy), then the site is judged on a and b alone (100).
    const routes = [
      { pool: 'a', requests: 250, hardBlocks: 0, challenges: 0, softBlocks: 0 },
      { pool: 'b', requests: 250, hardBlocks: 0, challenges: 0, softBlocks: 0 },
      { pool: 'c', requests: 40, hardBlocks: 40, challenges: 0, softBlocks: 0 },
    ];
    const routeFailure = () => ({
      ...window(540, { hard: 40 / 540 }, routes),
      recent: { requests: 540, hardBlocks: 40, challenges: 0, softBlocks: 0, routes },
    });
    const plans = run([healthy(), routeFailure(), routeFailure(), routeFailure(), routeFailure()]);
    // Watched on ticks 2 and 3, confirmed on tick 4 (three ticks, two minutes): only then alerted and set aside.
    expect(plans.slice(1).map((p) => p.state.reasons.includes('route_specific'))).toEqual([false, false, true, true]);
    expect(plans[1]!.notices).toEqual([]);
    expect(plans.slice(1).map((p) => p.state.score)).toEqual([88, 88, 100, 100]);
    // Never throttled: the route's refusals are set aside from the refusal rules from the first tick.
    expect(plans.slice(1).map((p) => p.change)).toEqual([null, null, null, null]);
    const notices = plans.flatMap((p) => p.notices);
    expect(notices.map((n) => n.kind)).toEqual(['route_alert']);
    expect(plans[3]!.notices[0]!.evidence.routes).toMatchObject({
      verdict: 'route-specific',
      suspects: [expect.objectContaining({ dimension: 'pool', value: 'c' })],
    });
  });

  test('a new site is learning: nominal controls, no action, no alert', () => {
    let s = initialLoopState('chain');
    const first = planTick(s, tickAssessment(1, degrading(), { baseline: null }), CONFIG);
    s = first.state;
    expect(s.band).toBe('learning');
    expect(first.change!.next).toMatchObject({ concurrencyLimit: 16, band: 'learning' });
    const second = planTick(s, tickAssessment(2, degrading(), { baseline: null }), CONFIG);
    expect(second.change).toBeNull();
    expect(second.notices).toEqual([]);
  });
});
