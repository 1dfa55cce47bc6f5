/**
 * What the per-tick assessment activity returns to the workflow: the scoring engine's assessment of the
 * site's windows, the database time it was made at (the loop's clock for smoothing and reminders) and
 * the site's registration. Defined here (pure types) so workflow code needs no import from activities.
 */
import type { CanaryEvidence } from '../canaries/latest';
import type { CrawlerCanaries } from '../canaries/types';
import type { Assessment } from '../scoring/assess';
import type { CanaryResults } from '../scoring/window';
import type { HealthBand } from '../common/names';

/** This tick's canary results (ground truth fetched through the production route). */
export interface TickCanaries {
  window: CanaryResults;
  /** Most serious first; formatted for people by core/canaries/latest.ts formatCanaryEvidence. */
  evidence: CanaryEvidence[];
  nextDueAt: string | null;
  /** UTC days left out of the baseline because canaries failed on them (baseline trust). */
  excludedBaselineDays: string[];
}

/**
 * The tick's scoring step as the assessment stored it (core/control/scoring-step.ts): what the loop's
 * summary of the tick says, computed from the same inputs by the same function.
 */
export interface TickScoring {
  /** The smoothed score, rounded (what the band is judged on); null while the site has none. */
  smoothedScore: number | null;
  /** The band the score puts the site in (refusal rules and the canary floor included), before the loop's gate. */
  scoredBand: HealthBand;
}

export interface TickAssessment {
  /** Idempotency key of this tick's row in `assessments`: `${site}/${chainId}/${tick}`. */
  assessmentKey: string;
  tick: number;
  /** Database time of the assessment (ISO-8601). */
  assessedAt: string;
  site: { registered: boolean; owner: string | null; parserOwner: string | null };
  /** The windows read (ISO bounds, half-open) — the current one is shortened after a resume. */
  window: { currentFrom: string; currentTo: string; baselineFrom: string; baselineTo: string };
  assessment: Assessment;
  /** Null for a site without canaries. */
  canaries: TickCanaries | null;
  /**
   * Canary requests the crawlers sent in the current window (`canary: true` events less the product's
   * own canary fetches): evidence while paused, with or without canaries of the product's. Absent from
   * assessments recorded before it existed.
   */
  crawlerCanaries?: CrawlerCanaries;
  /**
   * The tick's scoring step, stored with the row. Absent from rows stored before it existed and from an
   * assessment asked without the loop's state (a task scheduled by the release before). The planner
   * computes its own and never reads this one.
   */
  scoring?: TickScoring;
}
