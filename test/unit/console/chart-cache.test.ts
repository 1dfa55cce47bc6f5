import type { TopLevelSpec } from 'vega-lite';
import { ChartCache } from '../../../client/console/chart-cache';

/** A spec of the chart's kind with `values` as its data (the cache only hashes it). */
const spec = (values: number[]): TopLevelSpec => ({
  data: { values: values.map((v) => ({ v })) },
  mark: 'line',
  encoding: { y: { field: 'v', type: 'quantitative' } },
});

/** A drawing that says what it drew and counts its calls. */
function drawer(): { draw: (s: TopLevelSpec) => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    draw: (s) => {
      calls++;
      return Promise.resolve(`<svg>${JSON.stringify(s)}</svg>`);
    },
    calls: () => calls,
  };
}

test('the same spec is drawn once; any change to its data is drawn anew', async () => {
  const d = drawer();
  const cache = new ChartCache(1_000_000, d.draw);
  const a = await cache.svg(spec([1, 2, 3]));
  expect(await cache.svg(spec([1, 2, 3]))).toBe(a);
  expect(d.calls()).toBe(1);
  const b = await cache.svg(spec([1, 2, 4]));
  expect(b).not.toBe(a);
  expect(b).toBe(await d.draw(spec([1, 2, 4])));
  expect({ draws: cache.draws, hits: cache.hits }).toEqual({ draws: 2, hits: 1 });
});

test('concurrent requests for one chart draw it once', async () => {
  const d = drawer();
  const cache = new ChartCache(1_000_000, d.draw);
  const all = await Promise.all([1, 2, 3, 4].map(() => cache.svg(spec([7]))));
  expect(new Set(all).size).toBe(1);
  expect(d.calls()).toBe(1);
});

test('a failed drawing is not kept: the next request draws again', async () => {
  let fail = true;
  const cache = new ChartCache(1_000_000, () =>
    fail ? Promise.reject(new Error('vega broke')) : Promise.resolve('<svg/>'),
  );
  await expect(cache.svg(spec([1]))).rejects.toThrow('vega broke');
  fail = false;
  expect(await cache.svg(spec([1]))).toBe('<svg/>');
});

test('bounded by size: the least recently used chart is dropped first; clear() forgets all', async () => {
  const d = drawer();
  const one = (await d.draw(spec([1]))).length;
  const cache = new ChartCache(one * 2 + 1, d.draw);
  await cache.svg(spec([1]));
  await cache.svg(spec([2]));
  await cache.svg(spec([1])); // [1] is now the most recently used
  await cache.svg(spec([3])); // drops [2]
  const before = d.calls();
  await cache.svg(spec([1]));
  expect(d.calls()).toBe(before);
  await cache.svg(spec([2]));
  expect(d.calls()).toBe(before + 1);
  cache.clear();
  await cache.svg(spec([2]));
  expect(d.calls()).toBe(before + 2);
});
