/**
 * The canary results the rest of the product sees (activity return values, the workflow's state query,
 * notifications). Plain JSON (ISO strings, no Dates) so they cross Temporal payloads unchanged. Pure:
 * workflow code may import this module.
 */
import type { Outcome } from '@target-health/crawler/events/event';

export const CANARY_RESULTS = ['pass', 'mismatch', 'blocked', 'error'] as const;
/**
 * `pass`: normal page, known answer present. `mismatch`: normal-looking page, wrong value (the most
 * serious). `blocked`: challenge, block page or connection reset. `error`: timeout, network error,
 * unexpected status, or our own configuration (see `countsForSite`).
 */
export type CanaryResultKind = (typeof CANARY_RESULTS)[number];

export const CANARY_TRIGGERS = ['schedule', 'manual'] as const;
export type CanaryTrigger = (typeof CANARY_TRIGGERS)[number];

export interface CanaryRunSummary {
  /** `<site>/<name>`. */
  canaryId: string;
  site: string;
  name: string;
  /** The page, as people may see it: secret query values and any user info masked (core/canaries/page-url.ts). */
  url: string;
  /** How it travelled, without credentials: "direct", "route residential-de", "proxy 10.0.0.5:8080". */
  route: string;
  result: CanaryResultKind;
  reason: string;
  /** Short excerpt (≤ 500 characters): expected vs actual, the block page's title, the error. */
  evidence: string;
  /** The production classifier's outcome; null when nothing was fetched (a configuration error). */
  outcome: Outcome | null;
  status: number | null;
  latencyMs: number | null;
  /**
   * False when the run failed on our side before reaching the site (a route label this worker does not
   * know): it says nothing about the site, so it is neither a failure in the window nor a failed day.
   */
  countsForSite: boolean;
  /** The schedule slot (ISO-8601); for manual runs the moment it was asked for. */
  scheduledAt: string;
  /** When the fetch started (ISO-8601). */
  ranAt: string;
  trigger: CanaryTrigger;
  intervalMs: number;
  /** The definition revision the run checked (editing a canary starts a new revision). */
  revision: number;
}

export function isFailure(run: Pick<CanaryRunSummary, 'result' | 'countsForSite'>): boolean {
  return run.countsForSite && (run.result === 'blocked' || run.result === 'error');
}

/**
 * Canary requests the crawlers sent themselves (events with `canary: true`: the Crawlee adapter's and
 * the Scrapy extension's canaries, which go while a site is paused with `canaryOnly`) over a window:
 * the signal store's canary-marked requests less the product's own canary fetches, which are stored
 * there too. Evidence beside the product's canaries: how many went out and what they got.
 */
export interface CrawlerCanaries {
  /** Canary requests the crawlers sent in the window. */
  requests: number;
  /** Of those, answered with anything but a normal page (refused, challenged, errors). */
  failed: number;
}

/** The store's canary counts (`canary {runs, failures}` of a window) less the product's own fetches in it. */
export function crawlerCanaries(store: { runs: number; failures: number }, own: CrawlerCanaries): CrawlerCanaries {
  const requests = Math.max(0, store.runs - own.requests);
  return { requests, failed: Math.min(requests, Math.max(0, store.failures - own.failed)) };
}
