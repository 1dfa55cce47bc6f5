/**
 * The chart as it is drawn: real SVG from the spec (Vega-Lite → Vega, headless), parsed. Labels are found by
 * their text and checked at the x their mark's time has on the panel; the errors and volume panel's bars are
 * measured against the traffic given; every time on an axis is written one way.
 */
import type { CheerioAPI } from 'cheerio';
import { LABEL_DX } from '../../../tools/charts/mark-layout';
import { alertMark, controlMarks, decisionMark } from '../../../tools/charts/mark-labels';
import { MARK_LAYERS } from '../../../tools/charts/marks-panel';
import { CHART_WIDTH } from '../../../tools/charts/spec';
import { TRAFFIC_COLOURS, TRAFFIC_LAYERS } from '../../../tools/charts/traffic-panel';
import type { ChartMark } from '../../../tools/charts/types';
import { controls, minute, minuteChart } from './chart-data';
import { points, rects, renderChart, texts, timeAxisLabels } from './svg-read';

const M = 60_000;
const FROM = Date.UTC(2026, 10, 24, 22);
const TO = FROM + 360 * M;
/** Where a time is on every panel: its share of the period times the panel's width. */
const px = (t: number): number => ((t - FROM) / (TO - FROM)) * CHART_WIDTH;
const quiet = Array.from({ length: 360 }, (_, i) => minute(FROM + i * M, 600, 0));

describe('labelled marks', () => {
  const degrading = controls({ band: 'degrading', concurrencyLimit: 12 });
  const throttleSteps = [12, 9, 6].map((c) => controls({ band: 'degrading', concurrencyLimit: c }));
  const paused = controls({ band: 'resisting', concurrencyLimit: 6, paused: true });
  const marks: ChartMark[] = [
    alertMark({
      t: FROM + 30 * M,
      kind: 'route_alert',
      severity: 'warning',
      title: 'shop.example.com: route problem — pool res-eu failing',
      parserHealth: null,
      suspects: [{ dimension: 'pool', value: 'res-eu' }],
    }),
    ...controlMarks([
      ...throttleSteps.map((c, i) => ({
        t: FROM + (60 + i) * M,
        actor: 'control-loop',
        reason: 'score 62',
        oldControls: i === 0 ? controls() : throttleSteps[i - 1]!,
        newControls: c,
        decisionKey: null,
      })),
      {
        t: FROM + 90 * M,
        actor: 'control-loop',
        reason: 'score 20',
        oldControls: throttleSteps[2]!,
        newControls: paused,
        decisionKey: null,
      },
      {
        t: FROM + 200 * M,
        actor: 'human:alice',
        reason: 'resumed by alice: the wave is over',
        oldControls: paused,
        newControls: degrading,
        decisionKey: 'd1',
      },
    ]),
    decisionMark({ t: FROM + 200 * M, kind: 'resume', who: 'alice', why: 'the wave is over' }),
    alertMark({
      t: FROM + 300 * M,
      kind: 'parser_health',
      severity: 'warning',
      title: 'shop.example.com: parser health 42',
      parserHealth: 42,
      suspects: [],
    }),
  ];
  let $: CheerioAPI;
  beforeAll(async () => {
    $ = await renderChart(minuteChart(FROM, quiet, marks));
  });

  test.each([
    ['route alert: pool res-eu', FROM + 30 * M],
    // A run is labelled once, after its last step.
    ['throttled 16→6 (3 steps)', FROM + 62 * M],
    ['paused', FROM + 90 * M],
    ['resumed by alice', FROM + 200 * M],
    ['parser alert: health 42', FROM + 300 * M],
  ])('%s: drawn beside its mark, at its time', (text, t) => {
    const drawn = texts($, MARK_LAYERS.labels).filter((l) => l.text === text);
    expect(drawn.length).toBeGreaterThanOrEqual(1);
    for (const l of drawn) expect(l.x).toBeCloseTo(px(t) + LABEL_DX, 6);
  });

  test('each row is named at its left, top to bottom: decisions, alerts, actions', () => {
    const rows = $('g.marks_layer_0_marks > text')
      .toArray()
      .map((t) => ({
        text: $(t).text(),
        x: Number(/translate\(([-\d.e]+),([-\d.e]+)/.exec(t.attribs.transform!)![1]),
      }));
    expect(rows.map((r) => r.text)).toEqual(['decisions', 'alerts', 'actions']);
    for (const r of rows) expect(r.x).toBeLessThan(0);
  });

  test('a person resuming is named twice: the decision, and the change it made', () => {
    const resumed = texts($, MARK_LAYERS.labels).filter((l) => l.text === 'resumed by alice');
    expect(resumed).toHaveLength(2);
    // Different rows: decisions above actions.
    expect(resumed[0]!.y).not.toBe(resumed[1]!.y);
  });

  test('every stored event is a point at its time, its full text (UTC) as its tooltip', () => {
    const drawn = points($, MARK_LAYERS.points);
    const events = marks.flatMap((m) => m.events);
    expect(drawn).toHaveLength(events.length);
    for (const e of events) {
      const p = drawn.find((d) => d.title === e.text);
      expect(p).toBeDefined();
      expect(p!.x).toBeCloseTo(px(e.t), 6);
    }
    expect(drawn.find((d) => d.title!.includes('concurrency 12→9'))!.title).toBe(
      '2026-11-24 23:01 UTC — concurrency 12→9, by control-loop: score 62',
    );
  });

  test("each label's tooltip is its marks' full story", () => {
    const route = texts($, MARK_LAYERS.labels).find((l) => l.text.startsWith('route alert'))!;
    expect(route.title).toBe(
      '2026-11-24 22:30 UTC — warning route_alert: shop.example.com: route problem — pool res-eu failing',
    );
    const run = texts($, MARK_LAYERS.labels).find((l) => l.text.startsWith('throttled'))!;
    expect(run.title).toBe(
      '2026-11-24 23:00 to 2026-11-24 23:02 UTC — throttle in 3 steps: concurrency 16→6, band healthy→degrading, ' +
        'by control-loop: score 62',
    );
  });

  test('a run of control changes is underlined from its first step to its last', () => {
    const lines = $(`g.${MARK_LAYERS.runs}_marks > line`).toArray();
    expect(lines).toHaveLength(1);
    const x = Number(/translate\(([-\d.e]+),/.exec(lines[0]!.attribs.transform!)![1]);
    expect(x).toBeCloseTo(px(FROM + 60 * M), 6);
    expect(Number(lines[0]!.attribs.x2)).toBeCloseTo(px(FROM + 62 * M) - px(FROM + 60 * M), 6);
  });
});

describe('crowded marks', () => {
  // Twelve alerts in nine minutes: more than a lane can hold side by side.
  const kinds = ['degrading', 'resisting', 'paused', 'route_alert'];
  const marks = Array.from({ length: 12 }, (_, i) =>
    alertMark({
      t: FROM + 120 * M + Math.round(i * 45_000),
      kind: kinds[i % 4]!,
      severity: 'warning',
      title: `alert number ${i + 1}`,
      parserHealth: null,
      suspects: [{ dimension: 'country', value: `c${i + 1}` }],
    }),
  );
  let $: CheerioAPI;
  beforeAll(async () => {
    $ = await renderChart(minuteChart(FROM, quiet, marks));
  });

  test('labels are staggered into lanes, and every alert is named by a label or its tooltip', () => {
    const drawn = texts($, MARK_LAYERS.labels);
    expect(new Set(drawn.map((l) => l.y)).size).toBeGreaterThan(1);
    for (const m of marks) expect(drawn.some((l) => l.title!.split('\n').includes(m.label))).toBe(true);
    // The first is named in full (nothing before it to make way for).
    expect(drawn.find((l) => l.x === Math.min(...drawn.map((d) => d.x)))!.text).toMatch(/^alert: degrading/);
  });

  test('in each lane a label ends before the next one starts', () => {
    const byLane = new Map<number, typeof drawn>();
    const drawn = texts($, MARK_LAYERS.labels);
    for (const l of drawn) byLane.set(l.y, [...(byLane.get(l.y) ?? []), l]);
    for (const lane of byLane.values()) {
      lane.sort((a, b) => a.x - b.x);
      // 10 px text is at most 10 px a character wide (a full em); the next label starts right of its own point.
      for (let i = 1; i < lane.length; i++)
        expect(lane[i - 1]!.x + 10 * [...lane[i - 1]!.text].length).toBeLessThan(lane[i]!.x);
    }
  });
});

describe('errors and volume', () => {
  // 600 requests a minute; for 40 minutes from minute 100, 540 of them answered 503 (errors, not refusals).
  const outage = Array.from({ length: 360 }, (_, i) => minute(FROM + i * M, 600, i >= 100 && i < 140 ? 540 : 0));
  let $: CheerioAPI;
  beforeAll(async () => {
    $ = await renderChart(minuteChart(FROM, outage));
  });

  test('forty minutes of 503s: forty red bars, nine tenths of the bar, at those minutes', () => {
    const errors = rects($, TRAFFIC_LAYERS.errors);
    expect(errors).toHaveLength(40);
    errors.forEach((r, i) => {
      expect(r.fill).toBe(TRAFFIC_COLOURS.errors);
      expect(r.x).toBeCloseTo(px(FROM + (100 + i) * M), 6);
      expect(r.width).toBeCloseTo(px(FROM + M), 6);
    });
    const other = rects($, TRAFFIC_LAYERS.other);
    expect(other).toHaveLength(360);
    // One axis for both: a quiet minute's bar is 600/min tall, an outage minute's red part 540/min of it.
    const full = other[0]!.height;
    expect(full).toBeGreaterThan(80);
    for (const r of errors) expect(r.height / full).toBeCloseTo(0.9, 6);
    const during = other.filter((r) => r.x >= px(FROM + 100 * M) - 1e-6 && r.x < px(FROM + 140 * M) - 1e-6);
    expect(during).toHaveLength(40);
    for (const r of during) expect(r.height / full).toBeCloseTo(0.1, 6);
    // The red part starts at the axis: it reads directly as errors per minute.
    for (const r of errors) expect(r.y + r.height).toBeCloseTo(other[0]!.y + full, 6);
  });

  test('outside the outage no red, and the grey bar is the whole 600 a minute', () => {
    const inOutage = (x: number) => x >= px(FROM + 100 * M) - 1e-6 && x < px(FROM + 140 * M) - 1e-6;
    expect(rects($, TRAFFIC_LAYERS.errors).every((r) => inOutage(r.x))).toBe(true);
    const quietBars = rects($, TRAFFIC_LAYERS.other).filter((r) => !inOutage(r.x));
    expect(quietBars).toHaveLength(320);
    for (const r of quietBars) {
      expect(r.fill).toBe(TRAFFIC_COLOURS.other);
      expect(r.height).toBeCloseTo(quietBars[0]!.height, 6);
    }
  });

  test('the panel sits under the score panel and says what it shows', () => {
    const titles = $('g.role-axis-title text')
      .toArray()
      .map((t) => $(t).text());
    expect(titles).toEqual(expect.arrayContaining(['score', 'requests / minred: errors']));
    const order = $('g.role-scope')
      .toArray()
      .map((g) => /\b(\w+)_group\b/.exec(g.attribs.class ?? '')?.[1])
      .filter((n) => n !== undefined);
    expect(order).toEqual(['marks', 'score', 'traffic', 'refusals', 'latency']);
  });
});

describe('one time format', () => {
  let $: CheerioAPI;
  beforeAll(async () => {
    $ = await renderChart(minuteChart(FROM, quiet));
  });

  test('axes: HH:MM in UTC, the date at the first tick and at midnight, on the top and the bottom', () => {
    const axes = timeAxisLabels($);
    expect(axes).toHaveLength(2);
    const [top, bottom] = axes;
    // Top axis: the date over the time; bottom: under it.
    expect(top!.map(([date, time]) => [time, date])).toEqual(bottom!.map(([time, date]) => [time, date]));
    for (const [time, date] of bottom!) {
      expect(time).toMatch(/^([01]\d|2[0-3]):[0-5]\d$/);
      expect(date).toMatch(time === '00:00' ? /^\d{4}-\d{2}-\d{2}$/ : /^(\d{4}-\d{2}-\d{2})?$/);
    }
    // 22:00 UTC to 04:00 UTC: the first tick names the 24th, midnight the 25th, nothing else a date.
    expect(bottom![0]).toEqual(['22:00', '2026-11-24']);
    expect(bottom!.filter(([, date]) => date !== '')).toEqual([
      ['22:00', '2026-11-24'],
      ['00:00', '2026-11-25'],
    ]);
  });

  test('the title gives the period as YYYY-MM-DD HH:MM and says UTC', () => {
    expect($('g.role-title-text text').text()).toBe('shop.example.com — 2026-11-24 22:00 to 2026-11-25 04:00 UTC');
    expect($('g.role-title-subtitle text').first().text()).toMatch(/^all times UTC; /);
  });
});

test('assessments but no traffic and no marks: every panel still drawn, empty where there is nothing', async () => {
  const $ = await renderChart(minuteChart(FROM, []));
  expect(rects($, TRAFFIC_LAYERS.other)).toEqual([]);
  expect(rects($, TRAFFIC_LAYERS.errors)).toEqual([]);
  expect(points($, MARK_LAYERS.points)).toEqual([]);
  expect(
    $('g.role-axis-title text')
      .toArray()
      .map((t) => $(t).text()),
  ).toContain('score');
  expect($('g.mark-line.role-mark > path').length).toBeGreaterThan(0);
});
