/**
 * What a chart shows, as plain data: read from the store (tools/charts/read-history.ts), shaped by the pure
 * functions in tools/charts/series.ts, turned into a Vega-Lite spec by tools/charts/spec.ts. Times are epoch ms.
 */
import type { HealthBand } from '../../core/common/names';

/** Which rollup table a chart reads its signal rates from. */
export type RollupLevel = 'minute' | 'hour' | 'day';

export interface Resolution {
  level: RollupLevel;
  /** Width of one plotted bucket (a multiple of the level's own bucket). */
  bucketMs: number;
}

/** One bucket of the all-routes rollup row, summed. */
export interface RateBucket {
  t: number;
  requests: number;
  hardBlocks: number;
  challenges: number;
  softBlocks: number;
  /**
   * Requests the classifier called `error` (docs/classification.md): network and proxy errors (timeouts, DNS,
   * TLS, a proxy refusing; a reset connection is a hard block instead) and error answers — 5xx, and 4xx other
   * than 403/429 (a 404), a status override or a crawler's explicit `error`. A 503 carrying a block or
   * challenge page is a refusal, not an error. One count: the rollups keep no status or network error beside
   * it, so 5xx cannot be told from network errors here (docs/charts.md, "Errors").
   */
  errors: number;
  /** p95 latency of the bucket's merged histogram; null without requests. */
  p95LatencyMs: number | null;
}

/** One UTC day's normal: the 14 whole days that end the day before it (the loop's baseline, by day). */
export interface DayBaseline {
  day: number;
  /** Shares of requests, 0–1; null when the 14 days had no traffic. */
  hardBlockRate: number | null;
  challengeRate: number | null;
  softBlockRate: number | null;
  p95LatencyMs: number | null;
}

/** One assessment: the raw score of a tick (null: learning, too little traffic, failed). */
export interface ScoreTick {
  t: number;
  score: number | null;
  /**
   * The smoothed score stored with the tick (rounded, null while the site had none); absent for a tick stored
   * before it was, whose smoothed score the chart recomputes.
   */
  smoothed?: number | null;
}

export interface ScoreBucket {
  t: number;
  /** Mean and lowest raw score of the bucket's scored ticks; null when none was scored. */
  meanScore: number | null;
  minScore: number | null;
  /**
   * The smoothed score at the bucket's last tick: the one stored with it, or for a tick stored before it was, the
   * loop's EWMA recomputed over the raw scores.
   */
  smoothedScore: number | null;
  ticks: number;
}

/** A change of the band the loop published (control_audit). */
export interface BandChange {
  t: number;
  band: HealthBand;
}

export interface BandPeriod {
  from: number;
  to: number;
  band: HealthBand;
}

export type MarkKind = 'decision' | 'alert' | 'control change';

/** One stored row a mark stands for: a decision, a notification, or one control change. */
export interface MarkEvent {
  t: number;
  /** Its whole story for the tooltip: when (UTC), what, who, why. */
  text: string;
}

/** A labelled mark: one stored event, or a run of control changes folded into one action. */
export interface ChartMark {
  /** The first event's time. */
  t: number;
  /** The last event's time, for a run of several changes; null for one event. */
  until: number | null;
  kind: MarkKind;
  /** The few words drawn beside it: `paused`, `resumed by alice`, `route alert: pool res-eu`. */
  short: string;
  /** Everything, for the tooltip (the short label may be cut to fit). */
  label: string;
  /** In time order; a point is drawn for each. */
  events: MarkEvent[];
}

/** Requests and errors per minute over one plotted bucket: the mean over the minutes of it the period holds. */
export interface TrafficBucket {
  t: number;
  /** The bucket's end, clipped to the period. */
  t2: number;
  requestsPerMinute: number;
  errorsPerMinute: number;
}

/** Everything one chart shows, already bucketed. */
export interface ChartData {
  site: string;
  from: number;
  to: number;
  resolution: Resolution;
  /** A line under the title, e.g. that the ticks are a replay's (client/loop-record/source.ts). */
  note?: string;
  scores: ScoreBucket[];
  rates: RateBucket[];
  baselines: DayBaseline[];
  bands: BandPeriod[];
  marks: ChartMark[];
}
