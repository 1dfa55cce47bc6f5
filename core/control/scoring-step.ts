/**
 * The scoring step of one tick: the smoothed score and the band the score puts the site in (smoothing,
 * hysteresis, the refusal rules, the canary floor), from the previous tick's smoothing and band, the time
 * since that tick and this tick's assessment. One function for its two callers, so they agree by
 * construction: the planner (`planTick`, in the workflow), which acts on it, and the assessment
 * (activities/assess-site.ts `assessAt`), which stores it with the tick's row — history, `explain --at`
 * and the charts then read every tick's smoothed score from the database, not only the loop's last 50
 * ticks from a query. Pure and deterministic (it runs in the workflow sandbox).
 */
import { applyCanaryFloorToTick, type CanaryPolicy, DEFAULT_CANARY_POLICY } from '../canaries/band-floor';
import type { HealthBand } from '../common/names';
import type { Assessment } from '../scoring/assess';
import type { ReasonKey } from '../scoring/reasons';
import type { ScoringConfig } from '../scoring/config';
import { type SiteScoringState, type SiteTick, advanceSiteState } from '../scoring/site-state';
import type { SmoothedScore } from '../scoring/smoothing';
import type { LoopState } from './loop-state';
import type { TickScoring } from './tick-assessment';

/**
 * What the step needs of the previous tick besides the refusal streaks (which the assessment already
 * takes as `previousRefusal` and `previous`): the smoothing so far, the band it was judged in, and when.
 */
export interface ScoringCarry {
  smoothed: SmoothedScore;
  /** The scored band of the previous tick (null before the first). */
  band: HealthBand | null;
  /** The previous assessed tick's time (ISO), null before the first: smoothing weighs by the time since. */
  lastAssessedAt: string | null;
}

export interface ScoringStep {
  /** Time since the previous assessed tick (0 on the first; never negative). */
  elapsedMs: number;
  /** The tick after the canary floor: its band is the scored band, its state the next tick's `scoring`. */
  tick: SiteTick;
  /** The assessment's reasons after the canary floor (a mismatch first). */
  reasons: ReasonKey[];
}

function elapsedMs(from: string | null, to: string): number {
  if (from === null) return 0;
  // Database times; a clock step backwards must not make smoothing throw.
  return Math.max(0, Date.parse(to) - Date.parse(from));
}

/**
 * The step itself. Only `smoothed` and `band` of the previous scoring state count (the streaks are in the
 * assessment already), which is why the assessment can compute it from a `ScoringCarry`.
 */
export function scoringStep(
  previous: Pick<SiteScoringState, 'smoothed' | 'band'>,
  lastAssessedAt: string | null,
  assessment: Assessment,
  assessedAt: string,
  config: { scoring: ScoringConfig; canary?: CanaryPolicy | undefined },
): ScoringStep {
  const elapsed = elapsedMs(lastAssessedAt, assessedAt);
  const scored = advanceSiteState(previous, assessment, elapsed, config.scoring);
  // A canary returning a normal-looking page with the wrong value is the most serious finding: by
  // policy it puts the site in at least the degrading band and heads the reasons (core/canaries/band-floor.ts).
  const floored = applyCanaryFloorToTick(previous, scored, assessment, config.canary ?? DEFAULT_CANARY_POLICY);
  return { elapsedMs: elapsed, tick: floored.tick, reasons: floored.reasons };
}

/** What a tick's row stores of its step (`result.scoring`): the same values as the loop's tick summary. */
export function tickScoring(step: ScoringStep): TickScoring {
  return { smoothedScore: step.tick.smoothedScore, scoredBand: step.tick.band };
}

/** What the loop hands the next assessment of its state (the workflow and the replay engine alike). */
export function assessmentCarry(state: LoopState): {
  previousRefusal: number;
  previous: { majorityStreak: number; routeWatch: NonNullable<SiteScoringState['routeWatch']> };
  scoringFrom: ScoringCarry;
} {
  const s = state.scoring;
  return {
    previousRefusal: s.refusalStreak,
    previous: { majorityStreak: s.majorityStreak ?? 0, routeWatch: s.routeWatch ?? [] },
    scoringFrom: { smoothed: s.smoothed, band: s.band, lastAssessedAt: state.lastAssessedAt },
  };
}
