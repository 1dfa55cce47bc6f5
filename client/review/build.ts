/**
 * One incident review, built in three steps: the record it stands on (stored ticks, or a replay) and the facts
 * of the incident (./gather.ts), the tuning (./tune.ts: replays, the slow part) and the chart (an SVG,
 * tools/charts). `target-health review` prints or writes it and the console's Review page shows it; both build it
 * here, so the page and the CLI never compute the same evidence two ways.
 */
import { readChartData } from '../../tools/charts/read-history';
import { renderSvg } from '../../tools/charts/render';
import { buildChartSpec } from '../../tools/charts/spec';
import type { SiteHealthConfig } from '../../core/control/config';
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import type { Pool } from '../../server/db/pool';
import type { RunningSettings } from '../running-settings';
import { markedEvents } from '../commands/chart';
import { openRecord, storedTicksIn } from '../loop-record/open';
import { settingsInForce } from '../loop-record/settings-in-force';
import { chartLoopOf, type LoopRecord } from '../loop-record/record';
import { type Facts, gatherFacts, searchRange } from './gather';
import { ONSET_LOOKBACK_MS } from './onset';
import type { Tuning } from './schema';
import { tune } from './tune';
import { type Candidate, builtInCandidates } from './tune-figures';

export const DEFAULT_TICK_MS = 60_000;

export interface ReviewRequest {
  site: string;
  /** A time in the incident (ms). */
  t: number;
  beforeMs: number;
  afterMs: number;
  now: number;
  /** `--tick`: the replays' tick; null: the stored ticks' spacing (or the settings' own when replayed). */
  tickMs: number | null;
  /** `--config`: the file of settings the review replays the incident with, checked by the caller. */
  configFile?: string;
  /** `--candidate` files, checked by the caller; none: the built-in candidates. */
  candidates: readonly Candidate[];
  quietDays: number;
}

export interface GatheredReview {
  /** The facts of the incident: everything of the review but the tuning and the chart. */
  facts: Facts;
  /** The ticks the review stands on: the store's, or a replay made for it. */
  record: LoopRecord;
  /** The settings the review stands on (the tuning starts from them; the chart's smoothing comes from them). */
  current: SiteHealthConfig;
  /** Where they came from, as said after "once with" in the review. */
  settingsFrom: string;
}

/** The record a review stands on and its settings: the store's ticks, or a replay where the loop did not tick. */
export async function openReview(
  pool: Pool,
  running: () => Promise<RunningSettings>,
  q: ReviewRequest,
): Promise<Omit<GatheredReview, 'facts'>> {
  const { site, t, beforeMs, afterMs, now } = q;
  const range = searchRange({ t, beforeMs, afterMs, now });
  const opened = await openRecord(pool, {
    site,
    period: range,
    replayFrom: new Date(range.from.getTime() - ONSET_LOOKBACK_MS),
    settingsAt: new Date(t),
    ...(q.configFile === undefined ? {} : { configFile: q.configFile }),
    tickMs: q.tickMs,
    storedTicks: await storedTicksIn(pool, site, range.from, range.to),
    running,
    now,
  });
  let current: SiteHealthConfig;
  let settingsFrom: string;
  if (opened.config !== null) {
    // A replay's settings: the tuning starts from them too.
    current = opened.config;
    settingsFrom =
      opened.record.source.kind === 'replayed'
        ? opened.record.source.settingsFrom
        : q.configFile === undefined
          ? 'the product defaults (no --config given)'
          : `the settings of ${q.configFile}`;
  } else {
    // Live ticks: the replays start from the settings the loop had at the incident.
    const inForce = await settingsInForce(pool, site, new Date(t), range, running);
    current = inForce.config;
    settingsFrom = inForce.from;
  }
  return { record: opened.record, current, settingsFrom };
}

/** The incident around `t`, from the store (or a replay where the loop did not tick): a second or two. */
export async function gatherReview(
  pool: Pool,
  running: () => Promise<RunningSettings>,
  q: ReviewRequest,
): Promise<GatheredReview> {
  const opened = await openReview(pool, running, q);
  const { site, t, beforeMs, afterMs, now } = q;
  return { ...opened, facts: await gatherFacts(pool, opened.record, { site, t, beforeMs, afterMs, now }) };
}

/**
 * What other settings would have done: the incident replayed under the current settings and each candidate, and
 * over the quiet days asked for (seconds to minutes: the slow part of a review).
 */
export async function tuneReview(pool: Pool, g: GatheredReview, q: ReviewRequest): Promise<Tuning> {
  const tickMs = q.tickMs ?? g.facts.tickMs ?? DEFAULT_TICK_MS;
  const withTick = (c: SiteHealthConfig): SiteHealthConfig => ({ ...c, tickIntervalMs: tickMs });
  const candidates =
    q.candidates.length > 0
      ? q.candidates.map((c) => ({ ...c, config: withTick(c.config) }))
      : builtInCandidates(withTick(g.current));
  return tune(pool, {
    site: q.site,
    window: { from: g.facts.window.from, to: g.facts.window.to },
    now: q.now,
    current: { config: withTick(g.current), settingsFrom: g.settingsFrom },
    candidates,
    peakReachedAt: g.facts.peak?.reachedAt ?? null,
    onsetAt: g.facts.review.early.onset === null ? null : Date.parse(g.facts.review.early.onset.at),
    quietDays: q.quietDays,
  });
}

export interface DrawnChart {
  svg: string;
  /** What the chart covers, in words (after the file name in the CLI's note). */
  covers: string;
}

/** The chart around the window (a quarter of its length either side, 15 min to 2 h), as an SVG document. */
export async function drawReviewChart(pool: Pool, g: GatheredReview, now: number): Promise<DrawnChart> {
  const { record } = g;
  const review = g.facts.review;
  const from = Date.parse(review.window.from);
  const to = Date.parse(review.window.to);
  const pad = Math.min(2 * 3_600_000, Math.max(15 * 60_000, (to - from) / 4));
  const chartTo = Math.min(to + pad, now);
  const end = Math.max(chartTo, to + 60_000);
  const read = await readChartData(
    pool,
    review.site,
    from - pad,
    end,
    g.current.scoring.smoothing.halfLifeMs,
    chartLoopOf(record, from - pad, end),
  );
  const marks = markedEvents(read.data.marks);
  return {
    svg: await renderSvg(buildChartSpec(read.data)),
    covers:
      `${formatDuration(pad)} either side of the window, ${plural(read.ticks, 'tick')}, ` +
      `${plural(marks, 'mark')} (decisions, alerts, control changes), requests and errors ` +
      `per minute, times in UTC; \`target-health chart\` draws the same.`,
  };
}
