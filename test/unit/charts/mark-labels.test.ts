import { alertMark, controlMarks, decisionMark, type AuditChange } from '../../../tools/charts/mark-labels';
import type { Controls } from '../../../core/control/controls';
import { controls } from './chart-data';

const M = 60_000;
const T0 = Date.UTC(2026, 10, 24, 10);
const alert = (kind: string, o: Partial<Parameters<typeof alertMark>[0]> = {}) =>
  alertMark({ t: T0, kind, severity: 'warning', title: `shop: ${kind}`, parserHealth: null, suspects: [], ...o });
const change = (minute: number, before: Controls | null, after: Controls, o: Partial<AuditChange> = {}) => ({
  t: T0 + minute * M,
  actor: 'control-loop',
  reason: after.reason,
  oldControls: before,
  newControls: after,
  decisionKey: null,
  ...o,
});

test('a decision: what the person did, by whom; the tooltip has when (UTC) and why', () => {
  expect(decisionMark({ t: T0, kind: 'resume', who: 'alice@example.com', why: 'the wave is over' })).toEqual({
    t: T0,
    until: null,
    kind: 'decision',
    short: 'resumed by alice@example.com',
    label: '2026-11-24 10:00 UTC — resume by alice@example.com: the wave is over',
    events: [{ t: T0, text: '2026-11-24 10:00 UTC — resume by alice@example.com: the wave is over' }],
  });
  expect(decisionMark({ t: T0, kind: 'pause', who: 'bob', why: 'x' }).short).toBe('paused by bob');
  expect(decisionMark({ t: T0, kind: 'stop', who: 'bob', why: 'x' }).short).toBe('stopped by bob');
});

test('alerts: the route and the parser alerts say which route and how low; others their kind', () => {
  expect(alert('route_alert', { suspects: [{ dimension: 'pool', value: 'res-eu' }] }).short).toBe(
    'route alert: pool res-eu',
  );
  expect(
    alert('route_alert', {
      suspects: [
        { dimension: 'pool', value: 'res-eu' },
        { dimension: 'country', value: 'DE' },
      ],
    }).short,
  ).toBe('route alert: pool res-eu +1');
  expect(alert('route_alert').short).toBe('route alert');
  expect(alert('parser_health', { parserHealth: 41.6 }).short).toBe('parser alert: health 42');
  expect(alert('parser_health').short).toBe('parser alert');
  expect(alert('resisting', { severity: 'critical' })).toMatchObject({
    short: 'alert: resisting',
    label: '2026-11-24 10:00 UTC — critical resisting: shop: resisting',
  });
  expect(alert('assessment_failed').short).toBe('alert: assessment failed');
  expect(alert('reminder').short).toBe('reminder: waiting for a decision');
  expect(alert('paused', { title: null }).label).toBe('2026-11-24 10:00 UTC — warning paused');
});

test('control changes: a throttle run is one mark with a point per step; a pause and a resume their own', () => {
  const d1 = controls({ band: 'degrading', concurrencyLimit: 12, revisitMultiplier: 1.5 });
  const d2 = { ...d1, concurrencyLimit: 9 };
  const d3 = { ...d1, concurrencyLimit: 6 };
  const paused = controls({ ...d3, band: 'resisting', paused: true, reason: 'score 20' });
  const resumed = controls({ ...d3, band: 'degrading', reason: 'resumed by alice: over' });
  const marks = controlMarks([
    change(0, controls(), d1),
    change(1, d1, d2),
    change(2, d2, d3),
    change(10, d3, paused),
    change(50, paused, resumed, { actor: 'human:alice', decisionKey: 'd1' }),
  ]);
  expect(marks.map((m) => [m.short, m.t, m.until, m.events.length])).toEqual([
    ['throttled 16→6 (3 steps)', T0, T0 + 2 * M, 3],
    ['paused', T0 + 10 * M, null, 1],
    ['resumed by alice', T0 + 50 * M, null, 1],
  ]);
  expect(marks[0]!.label).toBe(
    '2026-11-24 10:00 to 2026-11-24 10:02 UTC — throttle in 3 steps: concurrency 16→6, revisit ×1→×1.5, band ' +
      'healthy→degrading, by control-loop: healthy',
  );
  expect(marks[0]!.events.map((e) => e.text)).toEqual([
    '2026-11-24 10:00 UTC — concurrency 16→12, revisit ×1→×1.5, band healthy→degrading, by control-loop: healthy',
    '2026-11-24 10:01 UTC — concurrency 12→9, by control-loop: healthy',
    '2026-11-24 10:02 UTC — concurrency 9→6, by control-loop: healthy',
  ]);
});

test('control changes: restoring, unpausing, stopping, and the first controls ever written', () => {
  const throttled = controls({ band: 'degrading', concurrencyLimit: 8 });
  const paused = controls({ band: 'resisting', paused: true, concurrencyLimit: 8 });
  const short = (c: ReturnType<typeof change>[]) => controlMarks(c).map((m) => m.short);
  expect(short([change(0, throttled, controls({ concurrencyLimit: 10 }))])).toEqual(['restored 8→10']);
  expect(short([change(0, paused, { ...paused, paused: false, band: 'degrading' })])).toEqual(['unpaused']);
  expect(
    short([change(0, paused, { ...paused, band: 'stopped' }, { actor: 'human:bob@example.com', decisionKey: 'd' })]),
  ).toEqual(['stopped by bob@example.com']);
  expect(short([change(0, null, controls())])).toEqual(['controls set']);
  expect(short([change(0, controls(), controls({ canaryOnly: true }), { actor: 'ops-script' })])).toEqual([
    'canaries only by ops-script',
  ]);
});
