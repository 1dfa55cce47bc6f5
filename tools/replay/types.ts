/**
 * What a replay produces: one record per tick, exactly what the live loop would have decided at that
 * tick's time (`asOf`), and what a scorecard or a comparison reads. Pure types: the engine is
 * tools/replay/engine.ts, the command client/commands/replay.ts.
 */
import type { HealthBand } from '../../core/common/names';
import type { Controls } from '../../core/control/controls';
import type { NoticeDraft, NoticeKind } from '../../core/control/notices';

/** A notice the tick would have sent: the live draft's kind, audience and title. */
export type ReplayNotice = Pick<NoticeDraft, 'kind' | 'audience' | 'title'>;

export interface ReplayTick {
  tick: number;
  /** The tick's time: its window is [asOf − window, asOf) over whole minutes that have passed. */
  asOf: string;
  /** `failed`: the assessment refused its data (as live: a non-retryable data error). */
  state: 'learning' | 'insufficient-data' | 'scored' | 'failed';
  score: number | null;
  smoothedScore: number | null;
  /** The loop's band after this tick (frozen while awaiting a person). */
  band: HealthBand;
  /** The band the smoothed score alone gives. */
  scoredBand: HealthBand;
  parserHealth: number | null;
  /** Reason keys, most important first (the first one is the "top reason"). */
  reasons: string[];
  /** Route diagnosis verdict: `site-wide`, `route-specific`, `none`, … */
  routeVerdict: string;
  /**
   * What the route diagnosis blamed this tick, as `dimension=value` (`pool=dc-3`, `country=BR`, or for
   * a single route its full key `country=US/pool=p1`); empty unless the verdict is route-specific.
   */
  failingRoutes: string[];
  /** Requests in the current window (after a resume: since the decision). */
  requests: number;
  /** Controls after this tick (null before the first change). */
  controls: Controls | null;
  /** `concurrency 12→9, …` when the tick changed the controls, else null. */
  change: string | null;
  notices: ReplayNotice[];
  /** Awaiting a person since (ISO), else null. */
  awaitingSince: string | null;
  /**
   * Human decisions applied since the previous tick (from the decisions file), in order, as `<time> <kind> by <who>`.
   */
  decisions: string[];
}

export interface ReplaySummary {
  site: string;
  from: string;
  to: string;
  tickMs: number;
  ticks: number;
  /** Milliseconds spent in each band (tick count × tick interval). */
  timeInBand: Record<HealthBand, number>;
  firstDegradeAt: string | null;
  firstPauseAt: string | null;
  /** Notices by kind. */
  notices: Partial<Record<NoticeKind, number>>;
  /** Ticks whose assessment gave no score (learning, insufficient data, failed). */
  unscoredTicks: number;
}

export interface ReplayResult {
  ticks: ReplayTick[];
  summary: ReplaySummary;
}
