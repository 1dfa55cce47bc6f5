/**
 * The chart as it is drawn: real SVG from the spec (Vega-Lite → Vega, headless), parsed. Every time on an axis
 * is written one way.
 */
import type { CheerioAPI } from 'cheerio';
import { minute, minuteChart } from './chart-data';
import { renderChart, timeAxisLabels } from './svg-read';

const M = 60_000;
const FROM = Date.UTC(2026, 10, 24, 22);
const quiet = Array.from({ length: 360 }, (_, i) => minute(FROM + i * M, 600));

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
