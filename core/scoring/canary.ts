/**
 * Canary check. Canaries are pages with a known correct answer fetched through the production routes;
 * one that parses fine but carries the wrong value is content a real visitor would not see — the
 * hardest failure to detect. Their answers are known independently of the site's baseline, so no
 * baseline is needed: `minMismatches` (default 1) mismatches raise `canary_mismatch`.
 */
import { DEFAULT_SCORING_CONFIG, type CanaryConfig } from './config';
import type { CanaryResults } from './window';

export interface CanaryCheck extends CanaryResults {
  mismatch: boolean;
}

export function checkCanaries(
  results: CanaryResults,
  config: CanaryConfig = DEFAULT_SCORING_CONFIG.canary,
): CanaryCheck {
  return {
    runs: results.runs,
    failures: results.failures,
    mismatches: results.mismatches,
    mismatch: results.mismatches >= config.minMismatches,
  };
}
