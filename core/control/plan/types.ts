/** The tick planner's inputs and outputs, shared by its parts (band, parser, routes). */
import type { CanaryPolicy } from '../../canaries/band-floor';
import type { ScoringConfig } from '../../scoring/config';
import type { RouteDiagnosis } from '../../scoring/route-diagnosis';
import type { ActionPolicy, Controls } from '../controls';
import type { LoopState } from '../loop-state';
import type { Evidence, NoticeDraft } from '../notices';
import type { TickAssessment } from '../tick-assessment';

export interface LoopConfig {
  site: string;
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
