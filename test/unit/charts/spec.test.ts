import { BAND_COLOURS, buildChartSpec } from '../../../tools/charts/spec';
import { MARK_KINDS } from '../../../tools/charts/marks-panel';
import { alertMark, controlMarks, decisionMark } from '../../../tools/charts/mark-labels';
import type { ChartData } from '../../../tools/charts/types';
import { controls } from './chart-data';

const H = 3_600_000;
const D = 24 * H;
const T0 = Date.UTC(2026, 10, 24);
const paused = controls({ band: 'resisting', paused: true });

const data: ChartData = {
  site: 'shop.example.com',
  from: T0,
  to: T0 + 2 * D,
  resolution: { level: 'hour', bucketMs: H },
  scores: [
    { t: T0, meanScore: 91.26, minScore: 88, smoothedScore: 90.04, ticks: 60 },
    { t: T0 + H, meanScore: null, minScore: null, smoothedScore: 90.04, ticks: 60 },
  ],
  rates: [
    { t: T0, requests: 1000, hardBlocks: 10, challenges: 5, softBlocks: 0, errors: 3, p95LatencyMs: 210.4 },
    { t: T0 + H, requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0, errors: 0, p95LatencyMs: null },
  ],
  baselines: [
    { day: T0 - D / 2, hardBlockRate: 0.02, challengeRate: 0.001, softBlockRate: null, p95LatencyMs: 200 },
    { day: T0 + D, hardBlockRate: null, challengeRate: null, softBlockRate: null, p95LatencyMs: null },
  ],
  bands: [
    { from: T0, to: T0 + H, band: 'healthy' },
    { from: T0 + H, to: T0 + 2 * D, band: 'resisting' },
  ],
  marks: [
    alertMark({
      t: T0 + H,
      kind: 'resisting',
      severity: 'critical',
      title: 'paused',
      parserHealth: null,
      suspects: [],
    }),
    ...controlMarks([
      {
        t: T0 + H,
        actor: 'control-loop',
        reason: 'score 30',
        oldControls: controls(),
        newControls: paused,
        decisionKey: null,
      },
    ]),
    decisionMark({ t: T0 + 3 * H, kind: 'resume', who: 'alice', why: 'checked' }),
  ],
};

type Layer = {
  name?: string;
  data: { values: Record<string, unknown>[] };
  mark: { type: string };
  encoding: Record<string, { field?: string; scale?: { type?: string; domain?: unknown[] } }>;
};
type Panel = { name: string; layer: Layer[] };
const spec = buildChartSpec(data) as unknown as { vconcat: Panel[]; title: { text: string; subtitle: string[] } };
const panel = (name: string): Panel => spec.vconcat.find((p) => p.name === name)!;
const layer = (name: string, type: string, i = 0): Layer => panel(name).layer.filter((l) => l.mark.type === type)[i]!;
const named = (p: string, name: string): Layer => panel(p).layer.find((l) => l.name === name)!;

test('five panels on one UTC time axis fixed to the period; the title in UTC', () => {
  expect(spec.vconcat.map((p) => p.name)).toEqual(['marks', 'score', 'traffic', 'refusals', 'latency']);
  for (const p of spec.vconcat)
    expect(p.layer[0]!.encoding.x!.scale).toMatchObject({ type: 'utc', domain: [T0, T0 + 2 * D] });
  expect(spec.title.text).toBe('shop.example.com — 2026-11-24 00:00 to 2026-11-26 00:00 UTC');
  expect(spec.title.subtitle[0]).toMatch(/^all times UTC; 1 h buckets \(signals from hour rollups/);
});

test('band shading: one rect per period, coloured by the band the loop published', () => {
  const rect = layer('score', 'rect');
  expect(rect.data.values).toEqual([
    { t: T0, t2: T0 + H, band: 'healthy' },
    { t: T0 + H, t2: T0 + 2 * D, band: 'resisting' },
  ]);
  expect(rect.encoding.color!.scale).toEqual({ domain: Object.keys(BAND_COLOURS), range: Object.values(BAND_COLOURS) });
  // The zones' edges: the default thresholds.
  expect(layer('score', 'rule').data.values.map((v) => v.y)).toEqual([80, 50]);
});

test('score and smoothed score lines; buckets without a score leave a gap, not a zero', () => {
  expect(layer('score', 'line', 0).data.values).toEqual([{ t: T0, value: 91.3 }]);
  expect(layer('score', 'line', 1).data.values).toEqual([
    { t: T0, value: 90 },
    { t: T0 + H, value: 90 },
  ]);
});

test('signal rates in % of requests against their daily normal, clipped to the period', () => {
  expect(layer('refusals', 'line').data.values).toEqual([
    { t: T0, signal: 'hard blocks', value: 1 },
    { t: T0, signal: 'challenges', value: 0.5 },
    { t: T0, signal: 'soft blocks', value: 0 },
  ]);
  expect(layer('refusals', 'rule').data.values).toEqual([
    { t: T0, t2: T0 + D / 2, signal: 'hard blocks', value: 2 },
    { t: T0, t2: T0 + D / 2, signal: 'challenges', value: 0.1 },
  ]);
  expect(layer('latency', 'line').data.values).toEqual([{ t: T0, value: 210 }]);
  expect(layer('latency', 'rule').data.values).toEqual([{ t: T0, t2: T0 + D / 2, value: 200 }]);
});

test('traffic: per minute of each hour bucket, errors from 0 and the other requests stacked on them', () => {
  expect(named('traffic', 'traffic_errors').data.values).toEqual([
    { t: T0, t2: T0 + H, y: 0, y2: 0.1, part: 'errors' },
  ]);
  expect(named('traffic', 'traffic_other').data.values).toEqual([
    { t: T0, t2: T0 + H, y: 0.1, y2: 16.7, part: 'other requests' },
  ]);
});

test('marks: a row per kind, each mark labelled; decisions also as rules over the score', () => {
  const labels = named('marks', 'mark_labels').data.values;
  expect(labels.map((l) => [l.kind, l.text])).toEqual([
    ['decision', 'resumed by alice'],
    ['alert', 'alert: resisting'],
    ['control change', 'paused'],
  ]);
  expect(named('marks', 'mark_points').data.values.map((p) => p.kind)).toEqual(['decision', 'alert', 'control change']);
  // Rows top to bottom in MARK_KINDS' order, one lane each here.
  const ys = MARK_KINDS.map((k) => labels.find((l) => l.kind === k)!.y as number);
  expect([...ys].sort((a, b) => a - b)).toEqual(ys);
  expect(layer('score', 'rule', 1).data.values).toEqual([{ t: T0 + 3 * H }]);
});
