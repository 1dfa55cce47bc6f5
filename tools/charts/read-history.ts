/**
 * Reads what a chart of one site over [from, to) needs, in a handful of statements: signal and error counts
 * from the rollup level the resolution names (the all-routes row, summed per bucket in SQL), day rollups for
 * the daily normal, the assessments' raw and stored smoothed scores, and the marks (tools/charts/read-marks.ts:
 * band and control changes, decisions, notifications). Shaping is pure (tools/charts/series.ts,
 * tools/charts/mark-labels.ts).
 */
import type { Pool } from '../../server/db/pool';
import { ALL_ROUTES, ROLLUP_TABLE } from '../../server/db/signal-store/aggregate';
import { sumMinuteHistograms } from '../../server/db/signal-store/read-windows';
import { DEFAULT_SCORING_CONFIG } from '../../core/scoring/config';
import { LATENCY_HISTOGRAM, quantile } from '../../core/signals/histogram';
import { chooseResolution, floorTo, withinMinuteRetention } from './resolution';
import { BASELINE_DAYS, BASELINE_GAP_DAYS, bandPeriods, dailyBaselines, scoreBuckets } from './series';
import { alertMark, controlMarks, decisionMark } from './mark-labels';
import { type AuditRead, readAudit, readDecisions, readNotifications } from './read-marks';
import type { NotificationRow } from './mark-labels';
import type { ChartData, RateBucket, Resolution, ScoreTick } from './types';

const DAY = 86_400_000;
/** Ticks read before `from` to warm the smoothing up: after 6 half-lives the start weighs under 2 %. */
const WARMUP_HALF_LIVES = 6;
const num = (s: string | number | null): number => (s === null ? 0 : Number(s));

/** True when [from, to) has hour rows older than the site's oldest minute row (retention dropped those minutes). */
export async function minutesPruned(pool: Pool, site: string, from: number, to: number): Promise<boolean> {
  const { rows } = await pool.query<{ pruned: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM rollup_hour
        WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4
          AND bucket < date_trunc('hour', COALESCE((SELECT min(bucket) FROM rollup_minute
                                                     WHERE site = $1 AND route_key = $2), 'infinity'::timestamptz))
     ) AS pruned`,
    [site, ALL_ROUTES, new Date(from), new Date(to)],
  );
  return rows[0]?.pruned === true;
}

/** The all-routes rows of [from, to) summed per bucket; latency histograms come back as text, merged here. */
export async function readRateBuckets(
  pool: Pool,
  site: string,
  from: number,
  to: number,
  r: Resolution,
): Promise<RateBucket[]> {
  const { rows } = await pool.query<{
    t: Date;
    requests: string;
    hard_blocks: string;
    challenges: string;
    soft_blocks: string;
    errors: string;
    hists: string | null;
  }>(
    `SELECT date_bin($4::bigint * interval '1 millisecond', bucket, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS t,
            sum(requests) AS requests, sum(hard_blocks) AS hard_blocks, sum(challenges) AS challenges,
            sum(soft_blocks) AS soft_blocks, sum(errors) AS errors,
            string_agg(latency_hist::text, ';') AS hists
       FROM ${ROLLUP_TABLE[r.level]}
      WHERE site = $1 AND route_key = $5 AND bucket >= $2 AND bucket < $3
      GROUP BY 1 ORDER BY 1`,
    [site, new Date(from), new Date(to), r.bucketMs, ALL_ROUTES],
  );
  return rows.map((row) => ({
    t: row.t.getTime(),
    requests: num(row.requests),
    hardBlocks: num(row.hard_blocks),
    challenges: num(row.challenges),
    softBlocks: num(row.soft_blocks),
    errors: num(row.errors),
    p95LatencyMs:
      row.hists === null
        ? null
        : (quantile(LATENCY_HISTOGRAM, sumMinuteHistograms(row.hists).map(Number), 0.95) ?? null),
  }));
}

/** Day rollups from the first baseline day of `from`'s day up to `to`: the normal of every day charted. */
export async function readDayTotals(
  pool: Pool,
  site: string,
  from: number,
  to: number,
): Promise<Parameters<typeof dailyBaselines>[0]> {
  const first = floorTo(from, DAY) - (BASELINE_DAYS + BASELINE_GAP_DAYS) * DAY;
  const { rows } = await pool.query<{
    day: Date;
    requests: string;
    hard_blocks: string;
    challenges: string;
    soft_blocks: string;
    latency_hist: string | null;
  }>(
    `SELECT bucket AS day, requests, hard_blocks, challenges, soft_blocks, latency_hist::text AS latency_hist
       FROM rollup_day WHERE site = $1 AND route_key = $4 AND bucket >= $2 AND bucket < $3 ORDER BY bucket`,
    [site, new Date(first), new Date(to), ALL_ROUTES],
  );
  return rows.map((row) => ({
    day: row.day.getTime(),
    requests: num(row.requests),
    hardBlocks: num(row.hard_blocks),
    challenges: num(row.challenges),
    softBlocks: num(row.soft_blocks),
    latencyHist: row.latency_hist === null ? [] : sumMinuteHistograms(row.latency_hist).map(Number),
  }));
}

/**
 * Raw scores of the ticks in [from − warm-up, to), in time order (small columns of an indexed range), with the
 * smoothed score stored with each tick where it was (a stored scored band says so; the score may be null).
 */
export async function readScoreTicks(
  pool: Pool,
  site: string,
  from: number,
  to: number,
  halfLifeMs: number,
): Promise<ScoreTick[]> {
  const { rows } = await pool.query<{ t: string; score: number | null; smoothed: number | null; stored: boolean }>(
    `SELECT (extract(epoch FROM assessed_at) * 1000)::float8 AS t, score, smoothed_score AS smoothed,
            scored_band IS NOT NULL AS stored
       FROM assessments WHERE site = $1 AND assessed_at >= $2 AND assessed_at < $3
      ORDER BY assessed_at, tick`,
    [site, new Date(from - WARMUP_HALF_LIVES * halfLifeMs), new Date(to)],
  );
  return rows.map((r) => ({ t: Number(r.t), score: r.score, ...(r.stored ? { smoothed: r.smoothed } : {}) }));
}

/**
 * The loop's part of a chart from a replay instead of the store (client/loop-record): its ticks from the warm-up
 * on, its control changes (the one before `from` opens the period) and its notices.
 */
export interface ReplayedLoop {
  ticks: ScoreTick[];
  audit: AuditRead;
  notifications: NotificationRow[];
  /** Said under the title: the chart's ticks are a replay's. */
  note: string;
}

export interface ChartRead {
  data: ChartData;
  /** Assessments in [from, to) (the warm-up before it not counted). */
  ticks: number;
  /** Requests in [from, to) at the chosen rollup level. */
  requests: number;
}

export async function readChartData(
  pool: Pool,
  site: string,
  from: number,
  to: number,
  halfLifeMs = DEFAULT_SCORING_CONFIG.smoothing.halfLifeMs,
  replayed: ReplayedLoop | null = null,
): Promise<ChartRead> {
  let resolution = chooseResolution(from, to);
  if (resolution.level === 'minute')
    resolution = withinMinuteRetention(resolution, await minutesPruned(pool, site, from, to));
  const [rates, days, ticks, audit, decisions, alerts] = await Promise.all([
    readRateBuckets(pool, site, from, to, resolution),
    readDayTotals(pool, site, from, to),
    replayed?.ticks ?? readScoreTicks(pool, site, from, to, halfLifeMs),
    replayed?.audit ?? readAudit(pool, site, from, to),
    readDecisions(pool, site, from, to),
    replayed?.notifications ?? readNotifications(pool, site, from, to),
  ]);
  const scores = scoreBuckets(ticks, from, to, resolution.bucketMs, halfLifeMs);
  const bandChanges = [
    ...(audit.opening === null ? [] : [audit.opening]),
    ...audit.changes.map((c) => ({ t: c.t, band: c.newControls.band })),
  ];
  return {
    data: {
      site,
      from,
      to,
      resolution,
      ...(replayed === null ? {} : { note: replayed.note }),
      scores,
      rates,
      baselines: dailyBaselines(days, from, to),
      bands: bandPeriods(bandChanges, from, to),
      marks: [...decisions.map(decisionMark), ...alerts.map(alertMark), ...controlMarks(audit.changes)].sort(
        (a, b) => a.t - b.t,
      ),
    },
    ticks: scores.reduce((n, b) => n + b.ticks, 0),
    requests: rates.reduce((n, b) => n + b.requests, 0),
  };
}
