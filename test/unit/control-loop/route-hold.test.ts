/**
 * Holding the band while a route is confirmed: a tick whose score is pulled into a worse band by routes
 * still being confirmed holds the band, the smoothed score and the controls, so a burned or dead proxy
 * route gives a route alert without throttling the site first — also at fast ticks, where confirmation
 * (three ticks spanning two minutes) takes several ticks while the score would move within one.
 */
import { initialLoopState } from '../../../core/control/loop-state';
import { type LoopConfig, planTick, type TickPlan } from '../../../core/control/plan';
import type { RouteWindow, WindowInput } from '../../../core/scoring';
import { CONFIG, carried, tickAssessmentAt, window } from '../../kit/loop-fixtures';

const TICK = 10_000;

const config: LoopConfig = { ...CONFIG, tickIntervalMs: TICK };

/** A window of three pools, the `bad` one failing in the given way on all its requests, in the recent window too. */
function withBadPool(bad: 'hardBlocks' | 'errors'): WindowInput {
  const routes: RouteWindow[] = [
    { pool: 'a', requests: 200, hardBlocks: 1, challenges: 0, softBlocks: 0 },
    { pool: 'b', requests: 200, hardBlocks: 1, challenges: 0, softBlocks: 0 },
    {
      pool: 'c',
      requests: 200,
      hardBlocks: bad === 'hardBlocks' ? 200 : 0,
      challenges: 0,
      softBlocks: 0,
      ...(bad === 'errors' ? { errors: 200 } : {}),
    },
  ];
  const hardBlocks = routes.reduce((n, r) => n + r.hardBlocks, 0);
  return {
    ...window(600, { hard: hardBlocks / 600 }, routes),
    recent: { requests: 600, hardBlocks, challenges: 0, softBlocks: 0, routes },
  };
}

/** Healthy for a minute of 10 s ticks, then the bad pool for three minutes. */
function run(bad: WindowInput): TickPlan[] {
  const plans: TickPlan[] = [];
  let s = initialLoopState('chain');
  for (let ms = 0; ms <= 4 * 60_000; ms += TICK) {
    const current = ms < 60_000 ? window(600) : bad;
    const plan = planTick(s, tickAssessmentAt(s.tick + 1, ms, current, carried(s)), config);
    plans.push(plan);
    s = plan.state;
  }
  return plans;
}

const throttles = (plans: TickPlan[]) => plans.filter((p) => p.change !== null && p.change.next.concurrencyLimit < 16);
const alertAt = (plans: TickPlan[]) => plans.findIndex((p) => p.notices.some((n) => n.kind === 'route_alert'));

test(
  'a burned route (its requests all refused) is alerted ' + 'at 10 s ticks without the site being throttled first',
  () => {
    const plans = run(withBadPool('hardBlocks'));
    const alert = alertAt(plans);
    // Confirmed after two minutes of being the suspect: tick 6 is the first bad one, 12 ticks later.
    expect(alert).toBeGreaterThan(6);
    expect(throttles(plans)).toEqual([]);
    expect(plans.every((p) => p.state.band === 'healthy')).toBe(true);
    // While held the controls say why; the score shown is the seed's (the pool's refusals in it) until confirmed.
    const held = plans[alert - 1]!;
    expect(held.state.score).toBeLessThan(80);
    expect(held.state.heldFor).toMatch(
      /band held while pool c is confirmed as a route problem \(score 100 without it\)/,
    );
    // Once confirmed, the pool is set aside: the score is the healthy pools' again.
    expect(plans.at(-1)!.state.score).toBe(100);
    expect(plans.flatMap((p) => p.notices).map((n) => n.kind)).toEqual(['route_alert']);
  },
);

test('a dead proxy (its requests all network errors) is alerted, and errors never reach the site score', () => {
  const plans = run(withBadPool('errors'));
  expect(alertAt(plans)).toBeGreaterThan(6);
  expect(throttles(plans)).toEqual([]);
  const alert = plans[alertAt(plans)]!.notices.find((n) => n.kind === 'route_alert')!;
  expect(alert.title).toMatch(/pool c \(100% failing vs 1%\)/);
});
