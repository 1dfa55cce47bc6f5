/** The tick planner's inputs and outputs, shared by its parts (band, parser, routes). */
import type { CanaryPolicy } from '../../canaries/band-floor';
import type { ScoringConfig } from '../../scoring/config';
import type { RouteDiagnosis } from '../../scoring/route-diagnosis';
import type { ActionPolicy, Controls } from '../controls';
import type { LoopState } from '../loop-state';
import type { Evidence, NoticeDraft } from '../notices';
import type { TickAssessment } from '../tick-assessment';

/**
 * Which judgement rules a run follows. The workflow reads it once per run from the `judgement-2` and `judgement-3`
 * patches (workflows/patches.ts), so a run recorded before those rules replays with the old ones; everything
 * else (replay, backtest, tests) uses the current rules.
 *   1  steps once per tick; cost raised on any change; parser alert on one tick; a low-traffic site that
 *      was never scored stays `learning`;
 *   2  steps paced in time (`policy.steps`); cost raised only by `policy.cost.minRelativeRaise`; parser
 *      alert after `policy.parserAlertAfterMs` of persistence; a site with a usable baseline is never
 *      `learning` (too little current traffic holds the band, `healthy` when there is none yet);
 *   3  as 2, and a tick whose score is pulled into a worse band by routes still being confirmed holds
 *      the band and the smoothed score until they are confirmed or cleared (`judgement-3` patch).
 */
export type JudgementVersion = 1 | 2 | 3;
export const CURRENT_JUDGEMENT: JudgementVersion = 3;

export interface LoopConfig {
  site: string;
  /** The judgement rules of this run (see JudgementVersion). */
  judgement: JudgementVersion;
  /** The tick interval: a tick never credits more time than this to the step pace (a late loop does not catch up). */
  tickIntervalMs: number;
  policy: ActionPolicy;
  scoring: ScoringConfig;
  /** What a canary mismatch does to the band and the reasons (default: at least degrading, first reason). */
  canary?: CanaryPolicy;
}

export interface ControlChange {
  next: Controls;
  /** `concurrency 12→9, revisit ×1.5→×2.25`. */
  description: string;
  /** Recorded with the change on degrading ticks (which routes fail, or that it is site-wide). */
  routeDiagnosis: RouteDiagnosis | null;
}

export interface TickPlan {
  state: LoopState;
  change: ControlChange | null;
  notices: NoticeDraft[];
}

/** A notification worded once the tick's evidence exists (it includes this tick). */
export type NoticeFor = (evidence: Evidence) => NoticeDraft;

/**
 * The tick being planned: the state so far (each part updates it), and what it decided. Parts run in
 * a fixed order — band, parser, routes — and only add to it.
 */
export interface TickDraft {
  prev: LoopState;
  /** Time since the previous assessed tick (0 on the first). */
  elapsedMs: number;
  /** This tick's assessment, with the reasons after the canary floor. */
  t: TickAssessment;
  state: LoopState;
  change: ControlChange | null;
  notices: NoticeFor[];
  /** What the tick did, in words, for the history ("concurrency 12→9", "notified owner"). */
  actions: string[];
}
