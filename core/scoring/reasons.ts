/**
 * Every reason key the product emits, defined once. Operators see these keys in alerts, the CLI and the
 * Temporal UI, and tune weights by grepping history for them, so a key never changes meaning silently.
 * docs/reasons.md documents the same list (a unit test keeps the two in step).
 */

/** The seed's four hostility signals, in weight order (this order breaks ties between equal penalties). */
export const HEALTH_SIGNALS = ['hard_block', 'challenge', 'soft_block', 'latency'] as const;
export type HealthSignal = (typeof HEALTH_SIGNALS)[number];

/** Parser-health signals, in weight order. */
export const EXTRACTION_SIGNALS = [
  'extraction_missing_fields',
  'extraction_schema_mismatch',
  'extraction_empty',
] as const;
export type ExtractionSignal = (typeof EXTRACTION_SIGNALS)[number];

/** Cost-drift signals (per valid record), in reporting order. */
export const COST_SIGNALS = ['cost_retries', 'cost_bytes', 'cost_credits'] as const;
export type CostSignal = (typeof COST_SIGNALS)[number];

/** Route-diagnosis reasons. */
export const ROUTE_REASONS = ['route_specific'] as const;
export type RouteReason = (typeof ROUTE_REASONS)[number];

/** One line per key: what it means when it appears. */
export const REASONS = {
  hard_block: "Hard blocks (403, 429, connection resets) above the site's own normal rate.",
  challenge: "Challenges (CAPTCHA or interstitial pages) above the site's own normal rate.",
  soft_block:
    "Soft blocks (200 OK carrying a block page, an empty result or a cut-down layout) above the site's normal rate.",
  latency: "p95 latency above the site's own normal p95.",
  total_refusal:
    'At least 90% of requests refused on consecutive ticks with enough volume: treated as resisting whatever ' +
    'the score says.',
  majority_refusal:
    "At least half of the requests refused, and at least 4× the site's normal refused share, on consecutive " +
    'ticks (current or recent window): treated as resisting whatever the score says.',
  canary_mismatch: 'A canary page with a known answer came back looking normal but with the wrong value.',
  extraction_missing_fields: 'More extractions than usual miss required fields.',
  extraction_schema_mismatch: 'More extractions than usual no longer match the expected schema.',
  extraction_empty: 'More extractions than usual return nothing where records are usual.',
  cost_retries: "More retries per valid record than the site's normal.",
  cost_bytes: "More bytes downloaded per valid record than the site's normal.",
  cost_credits: "More credits spent per valid record than the site's normal.",
  route_specific:
    'Failures concentrate in some routes (country, pool or session pattern), confirmed over consecutive ticks: ' +
    'a route alert, excluded from the site score.',
} as const satisfies Record<
  HealthSignal | ExtractionSignal | CostSignal | RouteReason | 'total_refusal' | 'majority_refusal' | 'canary_mismatch',
  string
>;

export type ReasonKey = keyof typeof REASONS;
export const REASON_KEYS = Object.keys(REASONS) as ReasonKey[];

/**
 * The one order reasons are listed in, by weight: the refusal rules (they make a site resisting
 * whatever the score says), the health signals in weight order, a canary mismatch, a route alert, then
 * parser and cost signals — the order an assessment raises them in (core/scoring/assess.ts, where health
 * signals of unequal penalty go by penalty). Wherever reasons are shown without penalties, or tie on
 * something else (history's buckets: ticks raised), this breaks the tie.
 */
export const REASON_ORDER: readonly ReasonKey[] = [
  'total_refusal',
  'majority_refusal',
  ...HEALTH_SIGNALS,
  'canary_mismatch',
  ...ROUTE_REASONS,
  ...EXTRACTION_SIGNALS,
  ...COST_SIGNALS,
];

/**
 * Sorts reasons by REASON_ORDER; a string that is no reason key (a stored no-score sentence) goes last, alphabetically.
 */
export function compareReasons(a: string, b: string): number {
  const rank = (r: string): number => (isReasonKey(r) ? REASON_ORDER.indexOf(r) : REASON_ORDER.length);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Why a score is absent. These are sentences, not keys: the first is the seed's exact wording (the CLI
 * must reproduce the reference output), the others follow its style.
 */
export const NO_SCORE = {
  notEnoughRequests: 'not enough requests to judge',
  notEnoughExtractions: 'not enough extractions to judge',
  learning: 'baseline still learning',
} as const;
export type NoScoreReason = (typeof NO_SCORE)[keyof typeof NO_SCORE];

export function isReasonKey(value: string): value is ReasonKey {
  return Object.prototype.hasOwnProperty.call(REASONS, value);
}
