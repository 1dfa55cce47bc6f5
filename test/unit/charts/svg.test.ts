/**
 * The chart as it is drawn: real SVG from the spec (Vega-Lite → Vega, headless), parsed. The errors and volume
 * panel's bars are measured against the traffic given; every time on an axis is written one way.
 */
import type { CheerioAPI } from 'cheerio';
import { CHART_WIDTH } from '../../../tools/charts/spec';
import { TRAFFIC_COLOURS, TRAFFIC_LAYERS } from '../../../tools/charts/traffic-panel';
import { minute, minuteChart } from './chart-data';
import { rects, renderChart, timeAxisLabels } from './svg-read';

const M = 60_000;
const FROM = Date.UTC(2026, 10, 24, 22);
const TO = FROM + 360 * M;
/** Where a time is on every panel: its share of the period times the panel's width. */
const px = (t: number): number => ((t - FROM) / (TO - FROM)) * CHART_WIDTH;
const quiet = Array.from({ length: 360 }, (_, i) => minute(FROM + i * M, 600, 0));

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
    expect(order).toEqual(['score', 'traffic', 'refusals', 'latency', 'marks']);
  });
});

describe('one time format', () => {
  let $: CheerioAPI;
  beforeAll(async () => {
    $ = await renderChart(minuteChart(FROM, quiet));
  });

  test('the axis: HH:MM in UTC, the date under the first tick and under midnight', () => {
    const axes = timeAxisLabels($);
    expect(axes).toHaveLength(1);
    const [bottom] = axes;
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
