import {
  bandPeriods,
  dailyBaselines,
  scoreBuckets,
  trafficBuckets,
  type DayTotals,
} from '../../../tools/charts/series';
import type { RateBucket } from '../../../tools/charts/types';
import { LATENCY_HISTOGRAM, bucketIndex, emptyHistogram } from '../../../core/signals/histogram';

const M = 60_000;
const H = 60 * M;
const D = 24 * H;
const T0 = Date.UTC(2026, 10, 24);

describe('scoreBuckets', () => {
  test('mean and lowest raw score per bucket; the smoothed score follows the EWMA and carries the warm-up', () => {
    // Warm-up at 100 before `from`, then a drop to 40 at from.
    const ticks = [
      ...Array.from({ length: 60 }, (_, i) => ({ t: T0 - (60 - i) * M, score: 100 })),
      ...Array.from({ length: 120 }, (_, i) => ({ t: T0 + i * M, score: i < 60 ? (i % 2 === 0 ? 40 : null) : 40 })),
    ];
    const b = scoreBuckets(ticks, T0, T0 + 2 * H, H, 10 * M);
    expect(b.map((x) => x.t)).toEqual([T0, T0 + H]);
    expect(b[0]).toMatchObject({ meanScore: 40, minScore: 40, ticks: 60 });
    // Warm-up: the first bucket's smoothed score did not start from 40.
    const firstTick = scoreBuckets(ticks, T0, T0 + M, M, 10 * M)[0]!;
    expect(firstTick.smoothedScore).toBe(40 + 60 * Math.pow(2, -1 / 10));
    // After an hour (6 half-lives) at 40 the smoothed score is within 1 point of it, not equal to it.
    expect(b[0]!.smoothedScore!).toBeGreaterThan(40);
    expect(b[1]!.smoothedScore!).toBeLessThan(41);
  });

  test('a bucket without a scored tick has no mean; ticks outside [from, to) are not counted', () => {
    const ticks = [
      { t: T0 - M, score: 90 },
      { t: T0, score: null },
      { t: T0 + H, score: 70 },
      { t: T0 + 2 * H, score: 10 },
    ];
    const b = scoreBuckets(ticks, T0, T0 + 2 * H, H, 10 * M);
    expect(b).toEqual([
      { t: T0, meanScore: null, minScore: null, smoothedScore: 90, ticks: 1 },
      { t: T0 + H, meanScore: 70, minScore: 70, smoothedScore: expect.any(Number), ticks: 1 },
    ]);
    expect(b[1]!.smoothedScore).toBeCloseTo(90 + (1 - Math.pow(2, -61 / 10)) * (70 - 90), 9);
  });

  test("the smoothed score stored with a tick is the bucket's; recomputed only for ticks stored without one", () => {
    const ticks = [
      // Stored before the smoothed score was: recomputed (the EWMA from 90 toward 70).
      { t: T0 - M, score: 90 },
      { t: T0, score: 70 },
      // Stored: the loop's own (a resume restarted its smoothing: the recomputation would say ~70), even null.
      { t: T0 + H, score: 40, smoothed: 40 },
      { t: T0 + 2 * H, score: null, smoothed: null },
    ];
    const b = scoreBuckets(ticks, T0, T0 + 3 * H, H, 10 * M);
    expect(b[0]!.smoothedScore).toBeCloseTo(90 + (1 - Math.pow(2, -1 / 10)) * (70 - 90), 9);
    expect(b.slice(1).map((x) => x.smoothedScore)).toEqual([40, null]);
  });
});

describe('dailyBaselines', () => {
  const hist = (ms: number, n: number): number[] => {
    const h = emptyHistogram(LATENCY_HISTOGRAM);
    h[bucketIndex(LATENCY_HISTOGRAM, ms)] = n;
    return h;
  };
  const day = (t: number, requests: number, hardBlocks: number, latencyMs: number): DayTotals => ({
    day: t,
    requests,
    hardBlocks,
    challenges: 0,
    softBlocks: requests / 10,
    latencyHist: hist(latencyMs, requests),
  });

  test('each day is judged against the 14 whole days ending the day before it', () => {
    // 15 quiet days before T0 (1 % hard blocks, 200 ms), then T0 itself very hostile.
    const days = [
      ...Array.from({ length: 15 }, (_, i) => day(T0 - (15 - i) * D, 1000, 10, 200)),
      day(T0, 1000, 900, 2000),
    ];
    const [first, second] = dailyBaselines(days, T0, T0 + 2 * D);
    // T0: days T0-15 … T0-2 (the day before is left out, as the loop's baseline).
    expect(first).toMatchObject({ day: T0, hardBlockRate: 0.01, challengeRate: 0, softBlockRate: 0.1 });
    expect(first!.p95LatencyMs! / 200).toBeCloseTo(1, 1);
    // T0+1: still excludes T0 (the day before), so the hostile day does not raise the normal yet.
    expect(second).toMatchObject({ day: T0 + D, hardBlockRate: 0.01 });
  });

  test('a day whose 14 days had no traffic has no normal', () => {
    expect(dailyBaselines([day(T0 - D, 100, 1, 100)], T0, T0 + D)).toEqual([
      { day: T0, hardBlockRate: null, challengeRate: null, softBlockRate: null, p95LatencyMs: null },
    ]);
  });

  test('a period starting mid-day starts at that UTC day', () => {
    expect(dailyBaselines([], T0 + 5 * H, T0 + D + H).map((d) => d.day)).toEqual([T0, T0 + D]);
  });
});

describe('bandPeriods', () => {
  test('the band before the period opens it; each change holds until the next; same bands merge', () => {
    const p = bandPeriods(
      [
        { t: T0 - D, band: 'healthy' },
        { t: T0 + H, band: 'degrading' },
        { t: T0 + 2 * H, band: 'degrading' },
        { t: T0 + 3 * H, band: 'resisting' },
      ],
      T0,
      T0 + 4 * H,
    );
    expect(p).toEqual([
      { from: T0, to: T0 + H, band: 'healthy' },
      { from: T0 + H, to: T0 + 3 * H, band: 'degrading' },
      { from: T0 + 3 * H, to: T0 + 4 * H, band: 'resisting' },
    ]);
  });

  test('nothing is shaded before the first known change', () => {
    expect(bandPeriods([{ t: T0 + H, band: 'resisting' }], T0, T0 + 2 * H)).toEqual([
      { from: T0 + H, to: T0 + 2 * H, band: 'resisting' },
    ]);
    expect(bandPeriods([], T0, T0 + H)).toEqual([]);
  });
});

describe('trafficBuckets', () => {
  const bucket = (t: number, requests: number, errors: number): RateBucket => ({
    t,
    requests,
    hardBlocks: 0,
    challenges: 0,
    softBlocks: 0,
    errors,
    p95LatencyMs: null,
  });

  test('per minute of each bucket: a 1-hour bucket of 6,000 requests reads 100 a minute', () => {
    expect(trafficBuckets([bucket(T0, 6000, 600)], T0, T0 + H, { level: 'hour', bucketMs: H })).toEqual([
      { t: T0, t2: T0 + H, requestsPerMinute: 100, errorsPerMinute: 10 },
    ]);
  });

  test('at the edges, over the minutes the read covered, not the bucket width', () => {
    // 5-minute buckets of minute rollups; the period starts at :02 and ends at :58.
    const from = T0 + 2 * M;
    const to = T0 + 58 * M;
    const b = trafficBuckets([bucket(T0, 300, 3), bucket(T0 + 55 * M, 300, 0)], from, to, {
      level: 'minute',
      bucketMs: 5 * M,
    });
    expect(b).toEqual([
      // Minutes :02–:04 (three rows), drawn from :02.
      { t: from, t2: T0 + 5 * M, requestsPerMinute: 100, errorsPerMinute: 1 },
      // Minutes :55–:57, drawn to the period's end.
      { t: T0 + 55 * M, t2: to, requestsPerMinute: 100, errorsPerMinute: 0 },
    ]);
  });

  test('hour rollups: a period starting mid-hour covers from the first whole hour it read', () => {
    // 3-hour buckets; the period starts at 10:30, so the first bucket (09:00) holds only the 11:00 row.
    const nine = T0 + 9 * H;
    const b = trafficBuckets([bucket(nine, 6000, 0)], nine + 90 * M, nine + 6 * H, { level: 'hour', bucketMs: 3 * H });
    expect(b).toEqual([{ t: nine + 2 * H, t2: nine + 3 * H, requestsPerMinute: 100, errorsPerMinute: 0 }]);
  });
});
