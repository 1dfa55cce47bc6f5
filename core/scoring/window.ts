/**
 * Window aggregates: what one site did toward us during one window (the current tick, or the baseline:
 * the previous 14 days excluding the most recent day). zod schemas validate anything that crosses a
 * boundary (CLI input, activity payloads); the inferred types are what the scoring functions take.
 *
 * Counting rules the aggregator must follow (the scores rely on them):
 * - every request counts once in `requests`; a refused request counts once in exactly one of
 *   `hardBlocks`, `challenges`, `softBlocks` (soft blocks are detected by content, not status code);
 * - extraction outcomes are counted only for responses that were *not* refused, each in exactly one of
 *   `extractionOk`, `extractionMissingFields`, `extractionSchemaMismatch`, `extractionEmpty`. That is what
 *   keeps hostility out of parser health: a challenge page is a challenge, not a parser failure;
 * - `validRecords`, `retries`, `bytes` and `credits` cover all traffic of the window (they are costs).
 * Counts larger than `requests` are accepted (the reference tolerates them and rates are then > 1).
 */
import { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';

const COUNT_MESSAGE = 'expected a non-negative integer';
const NUMBER_MESSAGE = 'expected a non-negative number';
const LATENCY_MESSAGE = 'expected a non-negative number of milliseconds';

const requiredOr = (message: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'required' : message;

/** A count: a safe, non-negative integer (safe so every accepted JSON integer is represented exactly). */
const COUNT_SCHEMA = z.int({ error: requiredOr(COUNT_MESSAGE) }).min(0, { error: COUNT_MESSAGE });

/**
 * p95 latency in ms. Bounded by 2^53 - 1 so that an integer literal in JSON is read exactly by both
 * JavaScript and the Python reference (which reads big integers exactly and would otherwise divide
 * differently).
 */
const latencySchema = z
  .number({ error: requiredOr(LATENCY_MESSAGE) })
  .min(0, { error: LATENCY_MESSAGE })
  .max(Number.MAX_SAFE_INTEGER, { error: `${LATENCY_MESSAGE} (at most ${Number.MAX_SAFE_INTEGER})` });

const amountSchema = z.number({ error: requiredOr(NUMBER_MESSAGE) }).min(0, { error: NUMBER_MESSAGE });

/** Route labels are short names (ingest allows 64 characters); the cap keeps diagnoses and summaries small. */
export const MAX_LABEL_CHARS = 256;
const LABEL_MESSAGE = `expected a non-empty string of at most ${MAX_LABEL_CHARS} characters`;
const labelSchema = z
  .string({ error: LABEL_MESSAGE })
  .min(1, { error: LABEL_MESSAGE })
  .max(MAX_LABEL_CHARS, { error: LABEL_MESSAGE });

/** The four numbers the seed's health score reads. This alone is a valid window for `healthScore`. */
const HOSTILITY_WINDOW_SCHEMA = z.object(
  {
    requests: COUNT_SCHEMA,
    hardBlocks: COUNT_SCHEMA,
    challenges: COUNT_SCHEMA,
    softBlocks: COUNT_SCHEMA,
    p95LatencyMs: latencySchema,
  },
  { error: requiredOr('expected an object') },
);
export type HostilityWindow = z.output<typeof HOSTILITY_WINDOW_SCHEMA>;

/** Refusal counts without latency: what route diagnosis and total refusal read. */
export type RefusalCounts = Pick<HostilityWindow, 'requests' | 'hardBlocks' | 'challenges' | 'softBlocks'>;
/** A route's counts: its refusals and its errors (route diagnosis counts both as the route's failures). */
export type RouteCounts = RefusalCounts & { errors?: number };

/**
 * One route's share of the window. A route is whatever path the request took: a country, a proxy pool, a
 * session pattern (sticky, rotating, ...). Any label may be absent when the crawler does not know it.
 */
const routeWindowSchema = z.object(
  {
    country: labelSchema.optional(),
    pool: labelSchema.optional(),
    sessionPattern: labelSchema.optional(),
    requests: COUNT_SCHEMA,
    hardBlocks: COUNT_SCHEMA,
    challenges: COUNT_SCHEMA,
    softBlocks: COUNT_SCHEMA,
    /**
     * Requests on this route that got no answer from the site (network errors: a proxy refusing or
     * resetting, timeouts, DNS, TLS) or an error status. Not part of the health score (the seed's four
     * numbers); route diagnosis counts them as the route's failures: a dead proxy fails this way.
     * Absent from windows read before it existed (= 0).
     */
    errors: COUNT_SCHEMA.optional(),
    p95LatencyMs: latencySchema.optional(),
  },
  { error: 'expected an object' },
);
export type RouteWindow = z.output<typeof routeWindowSchema>;
export type RouteLabels = Pick<RouteWindow, 'country' | 'pool' | 'sessionPattern'>;

/** Canary fetches (pages with a known correct answer) run through the production routes. */
const canaryResultsSchema = z.object({
  runs: COUNT_SCHEMA.default(0),
  /** Fetches that did not produce a page (refused, timed out). */
  failures: COUNT_SCHEMA.default(0),
  /** Pages that looked normal but carried the wrong value. */
  mismatches: COUNT_SCHEMA.default(0),
});
export type CanaryResults = z.output<typeof canaryResultsSchema>;

/**
 * The last few whole minutes of the current window (`window.recentWindowMs`, default 5): refusal counts
 * only, per route too, so the refusal rules can judge an abrupt change before the whole current window
 * shows it (core/scoring/majority-refusal.ts). Absent from baselines and from windows read before it existed.
 */
const recentWindowSchema = z.object(
  {
    requests: COUNT_SCHEMA,
    hardBlocks: COUNT_SCHEMA,
    challenges: COUNT_SCHEMA,
    softBlocks: COUNT_SCHEMA,
    routes: z.array(routeWindowSchema, { error: 'expected an array of routes' }).default([]),
  },
  { error: 'expected an object' },
);
export type RecentWindow = z.output<typeof recentWindowSchema>;

const windowSchema = HOSTILITY_WINDOW_SCHEMA.extend({
  extractionOk: COUNT_SCHEMA.default(0),
  extractionMissingFields: COUNT_SCHEMA.default(0),
  extractionSchemaMismatch: COUNT_SCHEMA.default(0),
  extractionEmpty: COUNT_SCHEMA.default(0),
  validRecords: COUNT_SCHEMA.default(0),
  retries: COUNT_SCHEMA.default(0),
  bytes: COUNT_SCHEMA.default(0),
  /** Credits of a paid fetching service; may be fractional. */
  credits: amountSchema.default(0),
  canary: canaryResultsSchema.prefault({}),
  routes: z.array(routeWindowSchema, { error: 'expected an array of routes' }).default([]),
  recent: recentWindowSchema.optional(),
});
export type Window = z.output<typeof windowSchema>;
/** What callers may pass: everything beyond the hostility fields is optional. */
export type WindowInput = z.input<typeof windowSchema>;

export class WindowValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WindowValidationError';
  }
}

/** Validates and fills defaults; the error names the field (`baseline.hardBlocks: required`). */
export function parseWindow(input: unknown, name = 'window'): Window {
  const result = windowSchema.safeParse(input);
  if (!result.success) throw new WindowValidationError(formatIssues(result.error, { prefix: name }));
  return result.data;
}

/** A complete window from a partial one, for code that builds windows in TypeScript (and for tests). */
export function makeWindow(input: WindowInput): Window {
  return parseWindow(input);
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const countSchema = (): typeof COUNT_SCHEMA => COUNT_SCHEMA;
export const hostilityWindowSchema = (): typeof HOSTILITY_WINDOW_SCHEMA => HOSTILITY_WINDOW_SCHEMA;
