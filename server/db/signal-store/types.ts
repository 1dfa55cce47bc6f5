/**
 * The signal store's public contract: what ingestion accepts and reports, and what a tick reads.
 * Windows come back in the scoring engine's types, so the assessment activity passes them straight on.
 */
import type { Window } from '../../../core/scoring/window';

export interface WindowSpec {
  /** The moment the tick assesses (usually "now" from the database clock). */
  asOf: Date;
  /** Length of the current window, e.g. 15 minutes. */
  currentWindowMs: number;
  /** Length of the recent window inside it (the refusal rules' fast window), default 5 minutes. */
  recentWindowMs?: number;
  /**
   * The human gate: no traffic before this instant is judged (after a resume, the decision's time). The
   * current window then starts at the first whole minute from it, so a partial minute before the
   * decision never counts. Null or absent: no gate.
   */
  notBefore?: Date | null;
  /** Length of the baseline, default 14 days. */
  baselineMs: number;
  /** The most recent stretch left out of the baseline, default 1 day. */
  excludeRecentMs: number;
}

export const DEFAULT_WINDOW_SPEC = {
  currentWindowMs: 15 * 60_000,
  recentWindowMs: 5 * 60_000,
  baselineMs: 14 * 86_400_000,
  excludeRecentMs: 86_400_000,
} as const;

export interface SiteWindows {
  site: string;
  current: Window;
  /** Null when the site has no traffic at all in the baseline period (a new site). */
  baseline: Window | null;
  /** The exact bounds used (half-open [from, to)), for explanations and tests. */
  bounds: { current: { from: Date; to: Date }; recent: { from: Date; to: Date }; baseline: { from: Date; to: Date } };
}

// What ingestion reports is also what the crawler's recorder reports: one definition, in the crawler
// package (its API sink parses the API's answer into it).
export type { IngestResult, RejectedLine } from '@target-health/crawler/recorder/types';
