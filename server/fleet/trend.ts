/**
 * A site's recent score trend: the last `spanMs` (24 h) in `points` (20) equal buckets, each the mean
 * raw score of its ticks — what the sparklines of `sites` and `status` draw. The buckets are read for
 * all listed sites in one statement (server/db/score-trend.ts); this module sets the range and fills the gaps.
 */
import { z } from 'zod';
import { KEPT_BUCKET_MS, type TrendBucketRow } from '../db/score-trend';
import { sparkline } from './sparkline';

export const TREND_SPAN_MS = 24 * 3_600_000;
export const TREND_POINTS = 20;

/** `--json`: the trend of one site. */
export const trendSchema = z.object({
  from: z.string(),
  to: z.string(),
  bucketMs: z.number().int().positive(),
  /** Oldest first; null: no scored tick in that bucket (no tick, learning, or too little traffic). */
  points: z.array(z.number().nullable()),
  /** The same as unicode bars on the 0–100 scale, `·` per null point. */
  sparkline: z.string(),
});
export type Trend = z.output<typeof trendSchema>;

export interface TrendRange {
  from: Date;
  to: Date;
  bucketMs: number;
  points: number;
}

/**
 * The range up to `now` in `points` buckets of span / points (24 h → 72 min each), ending at the end of the
 * 24-minute step `now` falls in (steps from the Unix epoch, so aligned to the UTC day): the last bucket holds at
 * least the last 48 minutes, read up to `now`. A range on that grid is summed from the scores the database keeps
 * per step rather than from every tick.
 */
export function trendRange(now: Date, spanMs = TREND_SPAN_MS, points = TREND_POINTS): TrendRange {
  const bucketMs = Math.ceil(spanMs / points);
  const end = Math.ceil(now.getTime() / KEPT_BUCKET_MS) * KEPT_BUCKET_MS;
  return { from: new Date(end - bucketMs * points), to: now, bucketMs, points };
}

/** Each site's trend from the buckets read, one point per bucket (null where none was read). */
export function trendsFrom(
  rows: readonly TrendBucketRow[],
  sites: readonly string[],
  range: TrendRange,
): Map<string, Trend> {
  const points = new Map<string, Array<number | null>>(
    sites.map((s) => [s, Array.from({ length: range.points }, () => null)]),
  );
  for (const r of rows) {
    const line = points.get(r.site);
    // A tick exactly at `to` is outside the half-open range the query read; guard all the same.
    if (line === undefined || r.bucket < 0 || r.bucket >= range.points) continue;
    line[r.bucket] = r.mean === null ? null : Math.round(r.mean * 10) / 10;
  }
  const out = new Map<string, Trend>();
  for (const [site, line] of points) {
    out.set(site, {
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      bucketMs: range.bucketMs,
      points: line,
      sparkline: sparkline(line),
    });
  }
  return out;
}
