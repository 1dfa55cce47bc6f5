/**
 * The score trend behind the sparklines of `target-health sites` and `status`: the mean raw score of
 * each of many sites per time bucket, in ONE statement whatever the number of sites (the fleet listing
 * stays a bounded number of queries). It walks `assessments (site, assessed_at DESC)` once per site
 * over the range — with 60 s ticks, 1,440 rows a site for a day.
 */
import type { Pool } from './pool';

export interface TrendBucketRow {
  site: string;
  /** 0-based bucket from the range's start. */
  bucket: number;
  /** Mean raw score of the bucket's scored ticks; null when none of its ticks had a score. */
  mean: number | null;
  ticks: number;
}

/** Every site's buckets of `bucketMs` over [from, to) that hold at least one tick, unordered. */
export async function scoreBuckets(
  pool: Pool,
  sites: readonly string[],
  from: Date,
  to: Date,
  bucketMs: number,
): Promise<TrendBucketRow[]> {
  if (sites.length === 0) return [];
  const { rows } = await pool.query<{ site: string; bucket: number; mean: number | null; ticks: number }>(
    `SELECT site,
            floor(extract(epoch FROM assessed_at - $2::timestamptz) * 1000 / $4::float8)::int AS bucket,
            avg(score)::float8 AS mean,
            count(*)::int AS ticks
       FROM assessments
      WHERE site = ANY($1::text[]) AND assessed_at >= $2 AND assessed_at < $3
      GROUP BY 1, 2`,
    [sites, from, to, bucketMs],
  );
  return rows;
}
