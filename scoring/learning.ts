/**
 * Baseline sufficiency. Scoring compares a site with its own normal; a new site (no baseline) or one
 * whose baseline window saw too little traffic has no normal yet, and a score against an empty baseline
 * would call every challenge "20 points above normal". Such a site is `learning`: no health score, no
 * band action — only total refusal (which needs no baseline) can still mark it resisting.
 */
import { DEFAULT_SCORING_CONFIG, type LearningConfig } from './config';
import type { RefusalCounts } from './window';

export interface BaselineReadiness {
  ready: boolean;
  baselineRequests: number;
  minBaselineRequests: number;
  /** Why not ready, for the operator; null when ready. */
  detail: string | null;
}

export function baselineReadiness(baseline: RefusalCounts | null | undefined, config: LearningConfig = DEFAULT_SCORING_CONFIG.learning): BaselineReadiness {
  const requests = baseline?.requests ?? 0;
  if (baseline === null || baseline === undefined) {
    return { ready: false, baselineRequests: 0, minBaselineRequests: config.minBaselineRequests, detail: 'no baseline yet (new site)' };
  }
  if (requests < config.minBaselineRequests) {
    return {
      ready: false,
      baselineRequests: requests,
      minBaselineRequests: config.minBaselineRequests,
      detail: `baseline has ${requests} requests, needs ${config.minBaselineRequests}`,
    };
  }
  return { ready: true, baselineRequests: requests, minBaselineRequests: config.minBaselineRequests, detail: null };
}
