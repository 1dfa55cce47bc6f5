/**
 * The score trend behind the sparklines of `target-health sites`, `status` and the console's Fleet page: the
 * mean raw score of each of many sites per time bucket, in ONE statement whatever the number of sites (the
 * fleet listing stays a bounded number of queries).
 *
 * Scores are kept per 24-minute bucket as ticks are written (`assessment_score_buckets`, migration 015: triggers
 * on `assessments`), so a range on that grid in buckets of a multiple of 24 minutes — the sparklines' day in
 * 72-minute points — is summed from 60 narrow rows a site instead of 1,440 wide assessment rows at 60 s ticks.
 * Any other range is aggregated from `assessments` (`scoreBucketsFromTicks`), which is also the definition the
 * kept buckets are tested against.
 */
import type { Pool } from './pool';

/** The width of the kept buckets (migration 015's `date_bin(interval '24 minutes', …)` from the epoch). */
export const KEPT_BUCKET_MS = 24 * 60_000;

export interface TrendBucketRow {
  site: string;
  /** 0-based bucket from the range's start. */
  bucket: number;
  /** Mean raw score of the bucket's scored ticks; null when none of its ticks had a score. */
  mean: number | null;
  ticks: number;
}

/** [from, to) in buckets of `bucketMs` from `from` (server/fleet/trend.ts's `trendRange`). */
interface Range {
  from: Date;
  to: Date;
  bucketMs: number;
}

/** Every site's buckets of `range` that hold at least one tick, unordered. */
export async function scoreBuckets(pool: Pool, sites: readonly string[], range: Range): Promise<TrendBucketRow[]> {
  if (sites.length === 0) return [];
  const onGrid = range.from.getTime() % KEPT_BUCKET_MS === 0 && range.bucketMs % KEPT_BUCKET_MS === 0;
  if (!onGrid) return scoreBucketsFromTicks(pool, sites, range);
  // The kept bucket `to` falls in is read whole: it holds no tick after `to`, as no tick is stored ahead of its
  // time.
  // Grouped by date_bin, a timestamp, and numbered after: cheaper than numeric epoch arithmetic on every row.
  const { rows } = await pool.query<TrendBucketRow>(
    `SELECT site,
            ((date_part('epoch', date_bin($4::float8 * interval '1 millisecond', bucket, $2::timestamptz))
              - date_part('epoch', $2::timestamptz)) * 1000 / $4::float8)::int AS bucket,
            CASE WHEN sum(scored) > 0 THEN sum(score_sum)::float8 / sum(scored) END AS mean,
            sum(ticks)::int AS ticks
       FROM assessment_score_buckets
      WHERE site = ANY($1::text[]) AND bucket >= $2 AND bucket < $3
      GROUP BY site, date_bin($4::float8 * interval '1 millisecond', bucket, $2::timestamptz)`,
    [sites, range.from, range.to, range.bucketMs],
  );
  return rows;
}

/** The same from `assessments` itself, for any bucket width: a range scan of every tick of every site. */
export async function scoreBucketsFromTicks(
  pool: Pool,
  sites: readonly string[],
  range: Range,
): Promise<TrendBucketRow[]> {
  if (sites.length === 0) return [];
  const { rows } = await pool.query<TrendBucketRow>(
    `SELECT site,
            floor(extract(epoch FROM assessed_at - $2::timestamptz) * 1000 / $4::float8)::int AS bucket,
            avg(score)::float8 AS mean,
            count(*)::int AS ticks
       FROM assessments
      WHERE site = ANY($1::text[]) AND assessed_at >= $2 AND assessed_at < $3
      GROUP BY 1, 2`,
    [sites, range.from, range.to, range.bucketMs],
  );
  return rows;
}
