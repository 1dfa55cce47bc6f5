/**
 * Baseline sufficiency. Scoring compares a site with its own normal; a new site (no baseline) or one
 * whose baseline window saw too little traffic has no normal yet, and a score against an empty baseline
 * would call every challenge "20 points above normal". Such a site is `learning`: no health score, no
 * band action — only total refusal (which needs no baseline) can still mark it resisting.
 *
 * Not to be confused with a site that has its normal but too little *current* traffic to judge (a quiet
 * site, or one throttled to a trickle): that is `insufficient-data`, and the site is not learning
 * anything — its band is held (docs/scoring.md, "Learning").
 */
import type { Assessment } from './assess';
import { DEFAULT_SCORING_CONFIG, type LearningConfig, type ScoringConfig } from './config';
import type { RefusalCounts } from './window';
import { plural } from '../common/plural';

export interface BaselineReadiness {
  ready: boolean;
  baselineRequests: number;
  minBaselineRequests: number;
  /** Why not ready, for the operator; null when ready. */
  detail: string | null;
}

export function baselineReadiness(
  baseline: RefusalCounts | null | undefined,
  config: LearningConfig = DEFAULT_SCORING_CONFIG.learning,
): BaselineReadiness {
  const requests = baseline?.requests ?? 0;
  if (baseline === null || baseline === undefined) {
    return {
      ready: false,
      baselineRequests: 0,
      minBaselineRequests: config.minBaselineRequests,
      detail: 'no baseline yet (new site)',
    };
  }
  if (requests < config.minBaselineRequests) {
    return {
      ready: false,
      baselineRequests: requests,
      minBaselineRequests: config.minBaselineRequests,
      detail: `baseline has ${plural(requests, 'request')}, needs ${config.minBaselineRequests}`,
    };
  }
  return { ready: true, baselineRequests: requests, minBaselineRequests: config.minBaselineRequests, detail: null };
}

/**
 * Why an assessment has no health score, in words for the operator — learning the baseline, or too
 * little current traffic — or null when it has one.
 */
export function describeNoScore(
  a: Assessment,
  config: ScoringConfig = DEFAULT_SCORING_CONFIG,
): { state: 'learning' | 'insufficient-data'; detail: string } | null {
  if (a.state === 'learning')
    return { state: 'learning', detail: `learning the baseline: ${a.baseline.detail ?? 'baseline still learning'}` };
  if (a.state === 'insufficient-data') {
    const aside = a.health.scope === 'healthy-routes' ? ' (failing routes set aside)' : '';
    return {
      state: 'insufficient-data',
      detail:
        `too little current traffic to judge: ${plural(a.health.window.requests, 'request')} in the current ` +
        `window${aside}, needs ${config.health.minRequests}`,
    };
  }
  return null;
}
