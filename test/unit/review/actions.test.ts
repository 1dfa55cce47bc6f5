import type { RateBucket } from '../../../tools/charts/types';
import { actionEffect, groupActions } from '../../../client/review/actions';
import { actionKind } from '../../../core/control/action-runs';
import { change, M, NOMINAL as base, T0 } from '../../kit/review-changes';

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

describe('actionEffect: was it obeyed, did refusals fall once it was', () => {
  const span = (perMinute: number, rate: number | null) => ({
    requests: rate === null ? 0 : Math.round(perMinute * 10),
    refusals: rate === null ? 0 : Math.round(perMinute * 10 * rate),
    rate,
    perMinute: rate === null ? 0 : perMinute,
  });

  test('a throttle the crawler did not obey is flagged: requests per minute rose 40.6 → 47.8', () => {
    const e = actionEffect('throttle', span(40.6, 0.23), span(47.8, 0.3));
    expect(e.obeyed).toBe(false);
    expect(e.refusals).toBe('rose');
    expect(e.verdict).toMatch(/^NOT OBEYED: requests per minute 40\.6 → 47\.8 — the crawler did not slow down/);
    // A drop under 10 % is not obeying either.
    expect(actionEffect('pause', span(40, 0.5), span(37, 0.5)).obeyed).toBe(false);
  });

  test('a replayed action reached no crawler: no verdict of obedience, the traffic said as it was', () => {
    const e = actionEffect('pause', span(32.3, 0.28), span(37.1, 0.68), true);
    expect(e.obeyed).toBeNull();
    expect(e.verdict).toBe(
      'replayed: no crawler received this pause, so the traffic after it cannot say whether it would have been ' +
        'obeyed or helped (requests per minute 32.3 → 37.1; refusals rose 28.0 % → 68.0 %)',
    );
  });

  test('an obeyed throttle with refusals falling helped', () => {
    const e = actionEffect('throttle', span(40, 0.2), span(20, 0.05));
    expect(e).toEqual({
      obeyed: true,
      refusals: 'fell',
      verdict: 'obeyed (requests per minute 40.0 → 20.0); refusals fell 20.0 % → 5.0 %: it helped',
    });
    expect(actionEffect('throttle', span(40, 0.2), span(20, 0.2)).verdict).toMatch(/refusals did not fall$/);
    expect(actionEffect('throttle', span(40, 0.2), span(20, 0.4)).verdict).toMatch(/the site went on hardening$/);
  });

  test('after an obeyed pause, 23 % → 60 % of the few canaries refused is said to be the wall, not the pause', () => {
    const e = actionEffect('pause', span(40, 0.23), span(2, 0.6));
    expect(e.obeyed).toBe(true);
    expect(e.refusals).toBe('rose');
    expect(e.verdict).toContain('refusals rose 23.0 % → 60.0 %, but only 2.0 requests a minute were sent');
    expect(e.verdict).toContain('the wall still standing, not the pause making it worse');
  });

  test('a resume or a restore is not judged for obedience; traffic coming back is said', () => {
    expect(actionEffect('resume', span(2, 0.5), span(30, 0.02))).toEqual({
      obeyed: null,
      refusals: 'fell',
      verdict: 'traffic came back (requests per minute 2.0 → 30.0); refusals fell 50.0 % → 2.0 %',
    });
    expect(actionEffect('restore', span(30, 0.02), span(30, null)).refusals).toBeNull();
    expect(actionEffect('throttle', span(0, null), span(10, 0)).obeyed).toBeNull();
  });

  test('groupActions carries the verdict of each action', () => {
    const d1 = { ...base, band: 'degrading' as const, concurrencyLimit: 12 };
    // The crawler ignores the throttle: 10 a minute before, 12 after.
    const buckets: RateBucket[] = Array.from({ length: 60 }, (_, i) => ({
      t: T0 + (i - 20) * M,
      requests: i < 20 ? 10 : 12,
      hardBlocks: 2,
      challenges: 0,
      softBlocks: 0,
      errors: 0,
      p95LatencyMs: null,
    }));
    const [a] = groupActions([change(0, base, d1)], buckets);
    expect(a!.effect.obeyed).toBe(false);
    expect(a!.effect.verdict).toMatch(/^NOT OBEYED: requests per minute 10\.0 → 12\.0/);
  });
});
