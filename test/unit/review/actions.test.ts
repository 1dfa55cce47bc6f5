import type { RateBucket } from '../../../tools/charts/types';
import { groupActions } from '../../../client/review/actions';
import { actionKind } from '../../../core/control/action-runs';
import type { Controls } from '../../../core/control/controls';
import type { ControlChange } from '../../../server/db/history';

const M = 60_000;
const T0 = Date.parse('2026-11-24T12:00:00Z');
const base: Controls = {
  concurrencyLimit: 16,
  revisitMultiplier: 1,
  paused: false,
  canaryOnly: false,
  effectiveCostMultiplier: 1,
  band: 'healthy',
  reason: 'healthy',
};
const change = (minute: number, before: Controls, after: Controls, o: Partial<ControlChange> = {}): ControlChange => ({
  at: new Date(T0 + minute * M),
  changedAt: new Date(T0 + minute * M),
  actor: 'control-loop',
  reason: after.reason,
  oldControls: before,
  newControls: { ...after, version: 1 },
  assessmentKey: `k${minute}`,
  decisionKey: null,
  ...o,
});

test("actionKind: pause, stop, throttle, restore, a person's resume", () => {
  const degrading = { ...base, band: 'degrading' as const, concurrencyLimit: 12, revisitMultiplier: 1.5 };
  const paused = { ...degrading, band: 'resisting' as const, paused: true, canaryOnly: true };
  expect(actionKind(base, degrading, false)).toBe('throttle');
  expect(actionKind(degrading, paused, false)).toBe('pause');
  expect(actionKind(paused, { ...paused, band: 'stopped' }, true)).toBe('stop');
  expect(actionKind(paused, { ...degrading, concurrencyLimit: 8 }, true)).toBe('resume');
  expect(actionKind(degrading, base, false)).toBe('restore');
  expect(actionKind(null, base, false)).toBe('change');
});

test(
  'groupActions: steps into the same band by the same actor are one action; refusals before the first and after ' +
    'the last',
  () => {
    const d1 = { ...base, band: 'degrading' as const, concurrencyLimit: 12 };
    const d2 = { ...d1, concurrencyLimit: 9 };
    const p = { ...d2, band: 'resisting' as const, paused: true };
    const changes = [
      change(10, base, d1),
      change(11, d1, d2),
      change(20, d2, p),
      change(40, p, { ...d2, paused: false }, { actor: 'human:alice', decisionKey: 'd1' }),
    ];
    // 10 requests a minute; half refused from minute 5 to 20, none after.
    const buckets: RateBucket[] = Array.from({ length: 80 }, (_, i) => ({
      t: T0 + (i - 20) * M,
      requests: 10,
      hardBlocks: i - 20 >= 5 && i - 20 < 21 ? 5 : 0,
      challenges: 0,
      softBlocks: 0,
      errors: 0,
      p95LatencyMs: null,
    }));
    const actions = groupActions(changes, buckets);
    expect(actions.map((a) => [a.kind, a.steps, a.actor])).toEqual([
      ['throttle', 2, 'control-loop'],
      ['pause', 1, 'control-loop'],
      ['resume', 1, 'human:alice'],
    ]);
    expect(actions[0]!.change).toBe('concurrency 16→9, band healthy→degrading');
    expect(actions[0]!.from).toBe(new Date(T0 + 10 * M).toISOString());
    expect(actions[0]!.to).toBe(new Date(T0 + 11 * M).toISOString());
    // Before minute 10: minutes −5…9, five of them refused half. After minute 11: minutes 12…26, 12–20 refused half.
    expect(actions[0]!.before).toEqual({ requests: 150, refusals: 25, rate: 25 / 150, perMinute: 10 });
    expect(actions[0]!.after).toEqual({ requests: 150, refusals: 45, rate: 45 / 150, perMinute: 10 });
    expect(actions[2]!.after.rate).toBe(0);
  },
);
