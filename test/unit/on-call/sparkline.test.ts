import { SPARK_BARS, SPARK_GAP, sparkline } from '../../../server/fleet/sparkline';
import { trendRange, trendsFrom } from '../../../server/fleet/trend';

describe('sparkline', () => {
  test('one bar per value on the fixed 0–100 scale: eighths, ends included', () => {
    expect(sparkline([0, 12.4, 12.5, 37.5, 50, 62.5, 87.4, 87.5, 100])).toBe('▁▁▂▄▅▆▇██');
    expect([...sparkline([0, 25, 50, 75, 100])]).toHaveLength(5);
  });
  test('a flat healthy score is a full bar, not noise stretched over the range', () => {
    expect(sparkline([98, 99, 98, 100])).toBe('████');
    expect(sparkline([40, 40])).toBe('▄▄');
  });
  test('null and NaN are gaps; out-of-scale values are clamped', () => {
    expect(sparkline([null, 100, Number.NaN, -5, 140])).toBe(`${SPARK_GAP}█${SPARK_GAP}▁█`);
    expect(sparkline([])).toBe('');
  });
  test('another scale', () => {
    expect(sparkline([10, 20], { min: 10, max: 20 })).toBe(`${SPARK_BARS[0]}${SPARK_BARS[7]}`);
    expect(() => sparkline([1], { min: 5, max: 5 })).toThrow(/scale max 5 must be above min 5/);
  });
});

describe('trend', () => {
  const now = new Date('2026-12-01T12:00:00.000Z');
  test('the last 24 h in 20 buckets of 72 minutes', () => {
    const r = trendRange(now);
    expect(r).toEqual({ from: new Date('2026-11-30T12:00:00.000Z'), to: now, bucketMs: 72 * 60_000, points: 20 });
  });
  test('the range ends on a 24-minute grid from the epoch: its last bucket holds at least the last 48 minutes', () => {
    const at = new Date('2026-12-01T12:30:00.000Z');
    // 12:24 UTC is a step of the grid (31 × 24 min into the day): the range ends at the next one, 12:48.
    expect(trendRange(at)).toEqual({
      from: new Date('2026-11-30T12:48:00.000Z'),
      to: at,
      bucketMs: 72 * 60_000,
      points: 20,
    });
    expect(trendRange(new Date('2026-12-01T12:00:00.001Z')).from).toEqual(new Date('2026-11-30T12:24:00.000Z'));
  });
  test(
    'buckets read become points; missing buckets and unscored ones are gaps; unknown sites and stray buckets ' +
      'ignored',
    () => {
      const r = trendRange(now, 4 * 3_600_000, 4);
      const trends = trendsFrom(
        [
          { site: 'a.com', bucket: 0, mean: 100, ticks: 60 },
          { site: 'a.com', bucket: 2, mean: 41.26, ticks: 60 },
          { site: 'a.com', bucket: 3, mean: null, ticks: 5 },
          { site: 'a.com', bucket: 4, mean: 0, ticks: 1 },
          { site: 'other.com', bucket: 1, mean: 50, ticks: 1 },
        ],
        ['a.com', 'b.com'],
        r,
      );
      expect(trends.get('a.com')).toEqual({
        from: '2026-12-01T08:00:00.000Z',
        to: '2026-12-01T12:00:00.000Z',
        bucketMs: 3_600_000,
        points: [100, null, 41.3, null],
        sparkline: '█·▄·',
      });
      expect(trends.get('b.com')!.points).toEqual([null, null, null, null]);
      expect(trends.has('other.com')).toBe(false);
    },
  );
});
