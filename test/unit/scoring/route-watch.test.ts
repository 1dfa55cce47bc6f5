/** Route confirmation and hysteresis (core/scoring/route-watch.ts) on top of one tick's route diagnosis. */
import { parseScoringConfig } from '../../../core/scoring/config';
import { diagnoseRoutes } from '../../../core/scoring/route-diagnosis';
import { MAX_WATCHED, type RouteWatch, confirmRoutes, routeWatchSchema } from '../../../core/scoring/route-watch';
import type { RecentWindow, RouteWindow } from '../../../core/scoring/window';

const route = (pool: string, requests: number, hardBlocks: number): RouteWindow => ({
  pool,
  requests,
  hardBlocks,
  challenges: 0,
  softBlocks: 0,
});
const healthy = [route('a', 300, 6), route('b', 300, 6), route('c', 300, 6)];
const failing = [...healthy, route('dead', 80, 76)];
const recentOf = (routes: RouteWindow[]): RecentWindow => ({
  requests: routes.reduce((n, r) => n + r.requests, 0),
  hardBlocks: routes.reduce((n, r) => n + r.hardBlocks, 0),
  challenges: 0,
  softBlocks: 0,
  routes,
});
const T0 = Date.UTC(2026, 0, 1, 12, 0);

/** Runs ticks `stepMs` apart over the given (current routes, recent routes) pairs. */
function ticks(
  windows: Array<[RouteWindow[], RouteWindow[] | undefined]>,
  stepMs = 60_000,
  config = parseScoringConfig({}).routes,
  start: RouteWatch = [],
) {
  let watch = start;
  return windows.map(([current, recent], i) => {
    const r = confirmRoutes(
      diagnoseRoutes(current, [], config),
      current,
      recent === undefined ? undefined : recentOf(recent),
      watch,
      T0 + i * stepMs,
      config,
    );
    watch = r.watch;
    return r;
  });
}

test('a suspect is watched, then confirmed on its third consecutive tick (two minutes), once', () => {
  const r = ticks(Array.from({ length: 5 }, () => [failing, failing] as [RouteWindow[], RouteWindow[]]));
  expect(r.map((x) => x.diagnosis.verdict)).toEqual([
    'site-wide',
    'site-wide',
    'route-specific',
    'route-specific',
    'route-specific',
  ]);
  expect(r[0]!.diagnosis.watching).toEqual([{ dimension: 'pool', value: 'dead', ticks: 1, confirmTicks: 3 }]);
  expect(r[0]!.diagnosis.summary).toBe('no route confirmed yet; watching pool dead (1 of 3 ticks)');
  expect(r[0]!.diagnosis.excluded).toEqual({ requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 });
  expect(r.map((x) => x.diagnosis.newlyConfirmed)).toEqual([[], [], ['pool:dead'], [], []]);
  expect(r[2]!.diagnosis.excluded).toEqual({ requests: 80, hardBlocks: 76, challenges: 0, softBlocks: 0 });
});

test('ticks 10 s apart need the two minutes too, not just three ticks', () => {
  const r = ticks(
    Array.from({ length: 14 }, () => [failing, failing] as [RouteWindow[], RouteWindow[]]),
    10_000,
  );
  // 0 s … 120 s is thirteen ticks.
  expect(r.findIndex((x) => x.diagnosis.verdict === 'route-specific')).toBe(12);
});

test('no fresh evidence, no confirmation: the recent window must show the route failing by 30 points', () => {
  // The failures are in the current window only; the last five minutes of the route are clean.
  const r = ticks(
    Array.from({ length: 5 }, () => [failing, [...healthy, route('dead', 20, 1)]] as [RouteWindow[], RouteWindow[]]),
  );
  expect(r.every((x) => x.diagnosis.verdict === 'site-wide' && x.watch.length === 0)).toBe(true);
  // Fresh but small: 25 points above the rest is under the 30-point effect size.
  const small = ticks(
    Array.from({ length: 5 }, () => [failing, [...healthy, route('dead', 20, 5)]] as [RouteWindow[], RouteWindow[]]),
  );
  expect(small.every((x) => x.diagnosis.verdict === 'site-wide')).toBe(true);
});

test('a break in the streak starts it again', () => {
  const r = ticks([
    [failing, failing],
    [failing, failing],
    [healthy, healthy],
    [failing, failing],
    [failing, failing],
    [failing, failing],
  ]);
  expect(r.map((x) => x.diagnosis.verdict)).toEqual([
    'site-wide',
    'site-wide',
    'site-wide',
    'site-wide',
    'site-wide',
    'route-specific',
  ]);
});

test('a tick without data to test neither advances nor breaks the watch', () => {
  const tiny = [route('a', 5, 0), route('dead', 5, 5)];
  const r = ticks([
    [failing, failing],
    [tiny, tiny],
    [failing, failing],
    [failing, failing],
  ]);
  expect(r[1]!.diagnosis.verdict).toBe('insufficient-data');
  expect(r[1]!.watch).toEqual(r[0]!.watch);
  expect(r.map((x) => x.diagnosis.verdict)).toEqual(['site-wide', 'insufficient-data', 'site-wide', 'route-specific']);
});

test('a confirmed route stays set aside until it has been quiet for five ticks with data, then clears', () => {
  const confirmed = ticks(Array.from({ length: 3 }, () => [failing, failing] as [RouteWindow[], RouteWindow[]]));
  const after = ticks(
    Array.from({ length: 6 }, () => [healthy, healthy] as [RouteWindow[], RouteWindow[]]),
    60_000,
    parseScoringConfig({}).routes,
    confirmed[2]!.watch,
  );
  expect(after.map((x) => x.diagnosis.verdict)).toEqual([
    'route-specific',
    'route-specific',
    'route-specific',
    'route-specific',
    'site-wide',
    'site-wide',
  ]);
  // Held by hysteresis: its finding is computed on the tick's own window (here: a route with no traffic).
  expect(after[0]!.diagnosis.suspects).toEqual([
    expect.objectContaining({ dimension: 'pool', value: 'dead', threshold: 1 }),
  ]);
  expect(after.flatMap((x) => x.diagnosis.newlyConfirmed)).toEqual([]);
  expect(after[4]!.watch).toEqual([]);
});

test('windows read before the recent window existed are judged on the current window alone', () => {
  const r = ticks(Array.from({ length: 3 }, () => [failing, undefined] as [RouteWindow[], undefined]));
  expect(r[2]!.diagnosis.verdict).toBe('route-specific');
});

test('the watch stays bounded and valid whatever comes in', () => {
  const many: RouteWatch = Array.from({ length: 60 }, (_, i) => ({
    dimension: 'pool' as const,
    value: `p${i}`,
    streak: 1,
    since: null,
    quiet: 0,
    confirmed: i % 2 === 0,
  }));
  const r = confirmRoutes(diagnoseRoutes(failing, []), failing, recentOf(failing), many, T0);
  expect(r.watch.length).toBeLessThanOrEqual(MAX_WATCHED);
  expect(routeWatchSchema().safeParse(r.watch).success).toBe(true);
  // Confirmed entries are kept first.
  expect(r.watch.slice(0, 30).every((e) => e.confirmed)).toBe(true);
});

test('thresholds come from the configuration', () => {
  const config = parseScoringConfig({ routes: { confirmTicks: 1, confirmAfterMs: 0 } }).routes;
  expect(ticks([[failing, failing]], 60_000, config)[0]!.diagnosis.verdict).toBe('route-specific');
});
