/**
 * The state one site carries from tick to tick (smoothed score, band, refusal streak) and the pure step
 * that advances it with a new assessment. The workflow keeps this object in its own state, so a replay
 * recomputes exactly the same bands.
 */
import type { HealthBand } from '../common/names';
import type { Assessment } from './assess';
import type { RouteWatch } from './route-watch';
import { nextBand } from './bands';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from './config';
import { effectiveCostMultiplier } from './cost-drift';
import { pythonRound } from './python-round';
import { INITIAL_SMOOTHED_SCORE, type SmoothedScore, smoothScore } from './smoothing';

export interface SiteScoringState {
  smoothed: SmoothedScore;
  /** Null before the first tick. */
  band: HealthBand | null;
  /** Pass to the next `assess` as `previousRefusal`. */
  refusalStreak: number;
  /** Pass to the next `assess` in `previous` (absent in states from before these rules). */
  majorityStreak?: number;
  routeWatch?: RouteWatch;
}

export const INITIAL_SITE_STATE: SiteScoringState = Object.freeze({
  smoothed: INITIAL_SMOOTHED_SCORE,
  band: null,
  refusalStreak: 0,
});

export interface SiteTick {
  state: SiteScoringState;
  band: HealthBand;
  bandChanged: boolean;
  /** The smoothed score rounded like the reference (the `HealthScore` search attribute), or null. */
  smoothedScore: number | null;
  /** For a cost-aware scheduler: cost drift times 100 / smoothed score, capped. */
  effectiveCostMultiplier: number;
  /** Band and smoothed score held for routes being confirmed (see `advanceSiteState`). */
  heldForRoutes?: boolean;
}

const isScored = (band: HealthBand | null): boolean =>
  band === 'healthy' || band === 'degrading' || band === 'resisting';

/**
 * Band precedence:
 * - total or majority refusal → `resisting`;
 * - held for routes being confirmed → the previous band, smoothed score unchanged: a tick whose score is
 *   pulled into a worse band by routes still being confirmed (`assessment.routeHold`) waits for the
 *   routes' verdict, which comes within `routes.confirmAfterMs` and a few ticks (confirmed: set aside
 *   from the score; or cleared). The refusal rules are not held (they already set every suspect aside);
 * - no baseline → `learning`;
 * - no score (too little current traffic) → the previous band, or `healthy` for a site never scored:
 *   its baseline is usable, so it is not learning, and nothing is known against it;
 * - otherwise the hysteresis rule of bands.ts on the rounded smoothed score.
 */
export function advanceSiteState(
  // Only the smoothing and the band are read: the streaks come in with the assessment (core/control/scoring-step.ts).
  previous: Pick<SiteScoringState, 'smoothed' | 'band'>,
  assessment: Assessment,
  elapsedMs: number,
  config: ScoringConfig = DEFAULT_SCORING_CONFIG,
): SiteTick {
  const refused = assessment.totalRefusal.totalRefusal || assessment.majorityRefusal?.majorityRefusal === true;
  const held =
    !refused && (assessment.routeHold ?? null) !== null && isScored(previous.band) && previous.smoothed.value !== null;
  const smoothed = held
    ? previous.smoothed
    : smoothScore(previous.smoothed, assessment.health.score, elapsedMs, config.smoothing);
  const smoothedScore = smoothed.value === null ? null : pythonRound(smoothed.value);
  let band: HealthBand;
  if (refused) band = 'resisting';
  else if (held) band = previous.band!;
  else if (assessment.state === 'learning') band = 'learning';
  else if (smoothedScore === null) {
    // The baseline is usable, so the site is not learning; too little traffic is no evidence against it.
    band = previous.band === null || previous.band === 'learning' ? 'healthy' : previous.band;
  } else band = nextBand(previous.band, smoothedScore, config.bands);
  return {
    state: {
      smoothed,
      band,
      refusalStreak: assessment.totalRefusal.streak,
      // Assessments stored before these rules carry neither: the state keeps none either.
      ...(assessment.carry === undefined
        ? {}
        : { majorityStreak: assessment.carry.majorityStreak, routeWatch: assessment.carry.routeWatch }),
    },
    band,
    bandChanged: previous.band !== band,
    smoothedScore,
    effectiveCostMultiplier: effectiveCostMultiplier(assessment.cost.costRatio, smoothedScore, config.cost),
    ...(held ? { heldForRoutes: true } : {}),
  };
}
