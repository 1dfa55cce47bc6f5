/**
 * From the latest canary results to what the control loop needs: the `canary {runs, failures,
 * mismatches}` block of the current window (scoring raises `canary_mismatch` from it) and the evidence
 * lines for the human notification and the state query. Pure: workflow code may import this module.
 *
 * The window counts each canary's *latest* result, not every run inside the tick's window: a canary's
 * answer stands until it is checked again. So a mismatch keeps counting (and keeps the site at least
 * degrading) until the canary passes again, however long the tick. A result older than
 * `maxAgeIntervals` × its canary's interval is stale — the canary has not been checked lately (worker
 * down, activity failing) — and counts for nothing, so an old verdict cannot hold a site down forever.
 */
import type { CanaryResults } from '../scoring/window';
import { type CanaryResultKind, type CanaryRunSummary, type CrawlerCanaries, isFailure } from './types';

export const DEFAULT_MAX_AGE_INTERVALS = 3;

export interface CanaryEvidence {
  canaryId: string;
  name: string;
  url: string;
  route: string;
  result: CanaryResultKind;
  reason: string;
  evidence: string;
  status: number | null;
  ranAt: string;
  /** Older than maxAgeIntervals × interval: shown, not counted. */
  stale: boolean;
  /** False for runs that failed on our own configuration (not counted). */
  countsForSite: boolean;
}

export interface CanaryWindowInput {
  /** Put this in the current window as `canary` before `assess`. */
  canary: CanaryResults;
  /** Every canary's latest result, the most serious first (mismatch, blocked, error, pass), then by name. */
  evidence: CanaryEvidence[];
}

export interface CanaryWindowOptions {
  /** The tick's time (ISO-8601, epoch ms or Date). */
  asOf: string | number | Date;
  maxAgeIntervals?: number;
}

const SEVERITY: Record<CanaryResultKind, number> = { mismatch: 0, blocked: 1, error: 2, pass: 3 };

export function canaryWindowInput(
  latest: readonly CanaryRunSummary[],
  options: CanaryWindowOptions,
): CanaryWindowInput {
  const asOfMs = new Date(options.asOf).getTime();
  const maxAge = options.maxAgeIntervals ?? DEFAULT_MAX_AGE_INTERVALS;
  const canary: CanaryResults = { runs: 0, failures: 0, mismatches: 0 };
  const evidence: CanaryEvidence[] = [];
  for (const run of latest) {
    const age = asOfMs - new Date(run.scheduledAt).getTime();
    const stale = age > maxAge * run.intervalMs;
    if (!stale && run.countsForSite) {
      canary.runs += 1;
      if (run.result === 'mismatch') canary.mismatches += 1;
      else if (isFailure(run)) canary.failures += 1;
    }
    evidence.push({
      canaryId: run.canaryId,
      name: run.name,
      url: run.url,
      route: run.route,
      result: run.result,
      reason: run.reason,
      evidence: run.evidence,
      status: run.status,
      ranAt: run.ranAt,
      stale,
      countsForSite: run.countsForSite,
    });
  }
  evidence.sort(
    (a, b) =>
      SEVERITY[a.result] - SEVERITY[b.result] ||
      Number(a.stale) - Number(b.stale) ||
      a.canaryId.localeCompare(b.canaryId),
  );
  return { canary, evidence };
}

/** `12:03` of an ISO time (UTC). */
const hhmm = (iso: string): string => iso.replace(/^\d{4}-\d{2}-\d{2}T(\d{2}:\d{2}).*$/, '$1');

/** One line per canary for notifications: `MISMATCH shop.example.com/price (12:03Z, route dc-us): reason`. */
export function formatCanaryEvidence(e: CanaryEvidence): string {
  const when = `${hhmm(e.ranAt)}Z`;
  const flags = [when, e.route, ...(e.stale ? ['stale'] : []), ...(e.countsForSite ? [] : ['configuration'])].join(
    ', ',
  );
  const detail = e.result === 'pass' ? e.reason : `${e.reason} — ${e.evidence}`;
  return `${e.result.toUpperCase()} ${e.canaryId} (${flags}): ${detail}`;
}

/**
 * The crawlers' own canaries in words, one text for status, explain, the run's details, notifications
 * and reviews: `97 canary requests from the crawler 11:48–11:58Z: 90 ok, 7 refused or failed`.
 * `window` is the span they were counted over (ISO bounds), shown as times of day when given.
 */
export function formatCrawlerCanaries(c: CrawlerCanaries, window?: { from: string; to: string }): string {
  const span = window === undefined ? '' : ` ${hhmm(window.from)}–${hhmm(window.to)}Z`;
  const what = c.requests === 0 ? '' : `: ${c.requests - c.failed} ok, ${c.failed} refused or failed`;
  return `${c.requests} canary request${c.requests === 1 ? '' : 's'} from the crawler${span}${what}`;
}
