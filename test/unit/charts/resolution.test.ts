import { chooseResolution, describeBucket, MAX_POINTS, withinMinuteRetention } from '../../../tools/charts/resolution';

const H = 3_600_000;
const D = 24 * H;
const T0 = Date.UTC(2026, 10, 24);

test.each([
  ['an hour', H, 'minute', 60_000],
  ['six hours', 6 * H, 'minute', 60_000],
  ['a day', D, 'minute', 5 * 60_000],
  ['three days', 3 * D, 'minute', 15 * 60_000],
  ['14 days', 14 * D, 'hour', H],
  ['30 days', 30 * D, 'hour', 3 * H],
  ['90 days', 90 * D, 'hour', 6 * H],
  ['a year', 365 * D, 'day', D],
  ['800 days', 800 * D, 'day', 7 * D],
])('%s: %s rollups, buckets of %d ms', (_name, span, level, bucketMs) => {
  const r = chooseResolution(T0, T0 + span);
  expect(r).toEqual({ level, bucketMs });
  expect(span / r.bucketMs).toBeLessThanOrEqual(MAX_POINTS);
});

test('a short period whose minute rollups were dropped by retention is read from hour rollups', () => {
  const r = chooseResolution(T0, T0 + D);
  expect(withinMinuteRetention(r, true)).toEqual({ level: 'hour', bucketMs: H });
  expect(withinMinuteRetention(r, false)).toBe(r);
  const hourly = chooseResolution(T0, T0 + 14 * D);
  expect(withinMinuteRetention(hourly, true)).toBe(hourly);
});

test('bucket names', () => {
  expect([60_000, 15 * 60_000, H, 6 * H, D, 7 * D].map(describeBucket)).toEqual([
    '1 min',
    '15 min',
    '1 h',
    '6 h',
    '1 day',
    '7 days',
  ]);
});
