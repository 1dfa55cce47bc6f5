/**
 * The tick's read on the real PostgreSQL when a window's sums outgrow what JavaScript numbers hold
 * exactly (before this, one site's byte sum passing 2^53 made every tick of that site fail, forever).
 * Sums are exact in SQL and saturate at 2^53 - 1 when read; the latency histogram is summed as bigint;
 * the assessment of such a window is finite.
 */
import { randomUUID } from 'node:crypto';
import { ensurePartitions, readSiteWindows } from '../../server/db/signal-store';
import { ALL_ROUTES, routeKey } from '../../server/db/signal-store/aggregate';
import { createPool, type Pool } from '../../server/db/pool';
import { assess } from '../../core/scoring';
import { LATENCY_HISTOGRAM, bucketIndex, bucketValue } from '../../core/signals/histogram';
import { env } from '../kit/services';

let pool: Pool;
beforeAll(() => {
  pool = createPool(env('DATABASE_URL'), 2);
});
afterAll(async () => pool.end());

const newSite = () => `limits-${randomUUID().slice(0, 8)}.example.com`;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const BUCKET = bucketIndex(LATENCY_HISTOGRAM, 100);
/** A latency histogram with `n` requests in the 100 ms bucket. */
const histogram = (n: number): number[] =>
  Array.from({ length: LATENCY_HISTOGRAM.size }, (_, i) => (i === BUCKET ? n : 0));

type Level = 'rollup_minute' | 'rollup_hour' | 'rollup_day';

/**
 * One rollup row as the aggregator stores it (all-routes row with its histogram, or a route row).
 * Written directly: the sums under test are what years of a huge site, or a few thousand events at the
 * store's per-event limits, add up to.
 */
async function rollup(
  table: Level,
  site: string,
  bucket: number,
  values: { requests: string | number; bytes?: string | number; hist?: number[]; pool?: string },
): Promise<void> {
  await ensurePartitions(pool, table, [bucket]);
  const key = values.pool === undefined ? ALL_ROUTES : routeKey({ pool: values.pool });
  await pool.query(
    `INSERT INTO ${table} (site, bucket, route_key, pool, requests, ok, bytes, latency_hist) VALUES ($1, $2, ` +
      `$3, $4, $5::bigint, $5::bigint, $6::bigint, $7::integer[])`,
    [
      site,
      new Date(bucket),
      key,
      values.pool ?? null,
      String(values.requests),
      String(values.bytes ?? 0),
      values.hist ?? null,
    ],
  );
}

test('a current window whose byte sum passes 2^53 is read (saturated) and assessed', async () => {
  const site = newSite();
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  // Two minutes of 4,600 responses of 1 TB each (the store's per-event limit): 9.2e15 bytes > 2^53.
  for (const t of [now - MINUTE, now]) {
    await rollup('rollup_minute', site, t, { requests: 4_600, bytes: 4_600_000_000_000_000, hist: histogram(4_600) });
    await rollup('rollup_minute', site, t, { requests: 4_600, bytes: 4_600_000_000_000_000, pool: 'p1' });
  }
  // The tick after both minutes have passed.
  const w = await readSiteWindows(pool, site, {
    asOf: new Date(now + MINUTE),
    currentWindowMs: 10 * MINUTE,
    baselineMs: DAY,
    excludeRecentMs: DAY,
  });
  expect(w.current.requests).toBe(9_200);
  expect(w.current.bytes).toBe(Number.MAX_SAFE_INTEGER);
  expect(w.current.p95LatencyMs).toBe(bucketValue(LATENCY_HISTOGRAM, BUCKET));
  const a = assess({ current: w.current, baseline: { ...w.current, bytes: 50_000 * 9_200, validRecords: 9_200 } });
  expect(a.cost.reasons).toContain('cost_bytes');
  expect(Number.isFinite(a.cost.costRatio)).toBe(true);
});

test('baseline counts past 2^63 and a latency bucket past 2^31 are read without overflow', async () => {
  const site = newSite();
  const asOf = Date.now();
  // Two days inside the baseline (14 days ending one day ago, whole days read from day rollups), each
  // claiming 2^62 requests, 2^31 - 1 of them in one latency bucket: sums past both column types.
  for (const days of [3, 5]) {
    const day = Math.floor((asOf - days * DAY) / DAY) * DAY;
    await rollup('rollup_day', site, day, { requests: '4611686018427387904', hist: histogram(2 ** 31 - 1) });
  }
  await rollup('rollup_minute', site, Math.floor(asOf / MINUTE) * MINUTE - MINUTE, { requests: 1, hist: histogram(1) });

  const w = await readSiteWindows(pool, site, {
    asOf: new Date(asOf),
    currentWindowMs: 15 * MINUTE,
    baselineMs: 14 * DAY,
    excludeRecentMs: DAY,
  });
  expect(w.baseline?.requests).toBe(Number.MAX_SAFE_INTEGER);
  expect(w.baseline?.p95LatencyMs).toBe(bucketValue(LATENCY_HISTOGRAM, BUCKET));
  expect(w.current.requests).toBe(1);
  const a = assess({ current: w.current, baseline: w.baseline });
  expect(a.state).toBe('insufficient-data'); // one current request: too few to score, but assessed
});

test('the old integer histogram sum would have failed on the same rows (the test reaches the overflow)', async () => {
  const site = newSite();
  const day = Math.floor((Date.now() - 3 * DAY) / DAY) * DAY;
  await rollup('rollup_day', site, day, { requests: 1, hist: histogram(2 ** 31 - 1) });
  await rollup('rollup_hour', site, day + HOUR, { requests: 1, hist: histogram(2 ** 31 - 1) });
  await expect(
    pool.query(
      `SELECT th_hist_sum(latency_hist) FROM (SELECT latency_hist FROM rollup_day WHERE site = $1 UNION ALL ` +
        `SELECT latency_hist FROM rollup_hour WHERE site = $1) t`,
      [site],
    ),
  ).rejects.toThrow(/integer out of range/);
});
