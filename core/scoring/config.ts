/**
 * Scoring configuration: one zod schema with the product defaults. Everything tunable after an incident
 * review lives here (weights are opinions; docs/architecture.md). Validation errors name the field, e.g.
 * `health.weights: must sum to 100 (got 110)`, because a silently renormalised weight set would make two
 * sites' scores incomparable.
 */
import { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { countSchema } from './window';

const nonNegative = (what = 'expected a non-negative number') => z.number({ error: what }).min(0, { error: what });

function weightsSumTo100<T extends Record<string, number>>(weights: T, ctx: z.RefinementCtx): void {
  let total = 0;
  for (const value of Object.values(weights)) total += value;
  // A tolerance, so that 33.3 + 33.3 + 33.4 is accepted despite binary rounding.
  if (Math.abs(total - 100) > 1e-9) {
    ctx.addIssue({ code: 'custom', message: `must sum to 100 (got ${total})` });
  }
}

const weight = nonNegative('expected a non-negative weight');

/** Health weights keyed by reason key, in the seed's order (that order breaks ties between reasons). */
const HEALTH_WEIGHTS_SCHEMA = z
  .strictObject({
    hard_block: weight.default(35),
    challenge: weight.default(25),
    soft_block: weight.default(25),
    latency: weight.default(15),
  })
  .superRefine(weightsSumTo100);

/** Where each signal's badness saturates (reaches 1, i.e. the full weight is lost). */
const HEALTH_CAPS_SCHEMA = z.strictObject({
  /** Rate excess over baseline at full penalty: 0.20 = 20 percentage points. */
  rateExcess: z
    .number({ error: 'expected a number in (0, 1]' })
    .gt(0, { error: 'expected a number in (0, 1]' })
    .max(1, { error: 'expected a number in (0, 1]' })
    .default(0.2),
  /** Latency multiple of the baseline p95 at full penalty: 3 = three times normal. */
  latencyMultiple: z
    .number({ error: 'expected a number greater than 1' })
    .gt(1, { error: 'expected a number greater than 1' })
    .default(3),
});

const healthConfigSchema = z.strictObject({
  /** A current window with fewer requests gets no score (seed: MIN_REQUESTS = 50). */
  minRequests: countSchema().default(50),
  weights: HEALTH_WEIGHTS_SCHEMA.prefault({}),
  caps: HEALTH_CAPS_SCHEMA.prefault({}),
});

const parserConfigSchema = z.strictObject({
  /** Fewer extraction outcomes than this in the current window: no parser score. */
  minExtractions: countSchema().default(50),
  /** Fewer extraction outcomes than this in the baseline: parser health is still learning. */
  minBaselineExtractions: countSchema().default(200),
  weights: z
    .strictObject({
      extraction_missing_fields: weight.default(40),
      extraction_schema_mismatch: weight.default(40),
      extraction_empty: weight.default(20),
    })
    .superRefine(weightsSumTo100)
    .prefault({}),
  caps: z
    .strictObject({
      rateExcess: z
        .number({ error: 'expected a number in (0, 1]' })
        .gt(0, { error: 'expected a number in (0, 1]' })
        .max(1, { error: 'expected a number in (0, 1]' })
        .default(0.2),
    })
    .prefault({}),
});

const costConfigSchema = z.strictObject({
  /** Fewer requests than this in the current window: no cost ratios. */
  minRequests: countSchema().default(50),
  /** Fewer valid records than this in the baseline: cost drift is still learning. */
  minBaselineValidRecords: countSchema().default(50),
  /** A per-record cost at least this many times its baseline becomes a reason. */
  reasonRatio: z
    .number({ error: 'expected a number of at least 1' })
    .min(1, { error: 'expected a number of at least 1' })
    .default(1.5),
  /**
   * Baseline per-record costs are floored before dividing, like the seed floors baseline latency at
   * 1 ms: a site that never needed a retry must not turn one retry into an infinite ratio.
   */
  floors: z
    .strictObject({
      retriesPerRecord: z.number().gt(0, { error: 'expected a positive number' }).default(0.1),
      bytesPerRecord: z.number().gt(0, { error: 'expected a positive number' }).default(1024),
      creditsPerRecord: z.number().gt(0, { error: 'expected a positive number' }).default(0.01),
    })
    .prefault({}),
  /** Upper bound of the effective-cost multiplier handed to a cost-aware scheduler. */
  maxMultiplier: z.number().min(1, { error: 'expected a number of at least 1' }).default(10),
});

const learningConfigSchema = z.strictObject({
  /** A baseline with fewer requests is not a normal to compare against: the site is `learning`. */
  minBaselineRequests: countSchema().default(500),
});

const routeConfigSchema = z.strictObject({
  /** A route group (and the rest it is compared with) needs this many current requests to be judged. */
  minRouteRequests: countSchema().default(30),
  /** A group must fail at least this much more often than the rest (0.10 = 10 points) to matter. */
  minRateGap: z
    .number()
    .min(0, { error: 'expected a number in [0, 1]' })
    .max(1, { error: 'expected a number in [0, 1]' })
    .default(0.1),
  /** Family-wise significance level of the one-sided Fisher exact tests (Bonferroni-corrected). */
  alpha: z
    .number()
    .gt(0, { error: 'expected a number in (0, 1)' })
    .lt(1, { error: 'expected a number in (0, 1)' })
    .default(0.01),
  /**
   * Whether a route's errors (network errors — a proxy refusing or resetting, timeouts, DNS, TLS — and
   * error answers) count as its failures beside its refusals. They never count in the site's score;
   * here they are what shows a dead proxy, which refuses nothing and answers nothing.
   */
  countErrors: z.boolean({ error: 'expected true or false' }).default(true),
  /** If the suspect routes carry more than this share of the traffic, the problem is the site's. */
  maxBadShare: z
    .number()
    .gt(0, { error: 'expected a number in (0, 1]' })
    .max(1, { error: 'expected a number in (0, 1]' })
    .default(0.5),
  /**
   * Confirmation (core/scoring/route-watch.ts): a suspect is blamed — alerted, and its traffic set aside from
   * the score — only once it has been the suspect on this many consecutive ticks…
   */
  confirmTicks: z
    .int({ error: 'expected an integer of at least 1' })
    .min(1, { error: 'expected an integer of at least 1' })
    .default(3),
  /** …spanning at least this long (so 10 s ticks do not confirm on 20 s of one window)… */
  confirmAfterMs: z
    .int({ error: 'expected a whole number of milliseconds' })
    .min(0, { error: 'expected a whole number of milliseconds' })
    .default(120_000),
  /**
   * …and, on each of them, fails in the recent window (the last 5 minutes) at least this much more often
   * than the rest of that window's traffic (0.3 = 30 points): fresh evidence of a large effect, not a
   * cluster of the past quarter hour that is still inside the window.
   */
  minConfirmGap: z
    .number()
    .min(0, { error: 'expected a number in [0, 1]' })
    .max(1, { error: 'expected a number in [0, 1]' })
    .default(0.3),
  /** The suspect's requests the recent window needs for that comparison. */
  minRecentRouteRequests: countSchema().default(10),
  /** …and the one-sided Fisher exact test of the suspect against the rest of the recent window must give p ≤ this. */
  recentAlpha: z
    .number()
    .gt(0, { error: 'expected a number in (0, 1]' })
    .max(1, { error: 'expected a number in (0, 1]' })
    .default(0.000_01),
  /** A confirmed route is cleared after this many consecutive ticks on which it is no longer a suspect. */
  clearTicks: z
    .int({ error: 'expected an integer of at least 1' })
    .min(1, { error: 'expected an integer of at least 1' })
    .default(5),
});

const smoothingConfigSchema = z.strictObject({
  /** Time for an old score's weight to halve. 10 min: one bad minute moves the value by ~7%. */
  halfLifeMs: z.number().gt(0, { error: 'expected a positive number of milliseconds' }).default(600_000),
});

const bandConfigSchema = z
  .strictObject({
    healthyMin: z.number().default(80),
    degradingMin: z.number().default(50),
    /** Points past a boundary needed to leave the current band (see docs/scoring.md). */
    hysteresis: nonNegative().default(3),
  })
  .superRefine((b, ctx) => {
    if (!(b.degradingMin < b.healthyMin))
      ctx.addIssue({
        code: 'custom',
        message: `degradingMin (${b.degradingMin}) must be below healthyMin (${b.healthyMin})`,
      });
    if (b.hysteresis * 2 >= b.healthyMin - b.degradingMin) {
      ctx.addIssue({
        code: 'custom',
        path: ['hysteresis'],
        message: 'must be less than half the width of the degrading band',
      });
    }
  });

const totalRefusalConfigSchema = z.strictObject({
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
  /** Share of a window's requests refused (hard + challenge + soft) that counts as refusing. */
  threshold: z
    .number()
    .gt(0, { error: 'expected a number in (0, 1]' })
    .max(1, { error: 'expected a number in (0, 1]' })
    .default(0.9),
  /** Refusing ticks in a row needed. */
  consecutiveTicks: z.int().min(1, { error: 'expected an integer of at least 1' }).default(2),
  /** Volume a tick needs to count (like the score's minimum). */
  minRequests: countSchema().default(50),
});

const majorityRefusalConfigSchema = z.strictObject({
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
  /** Share of a window's requests refused (hard + challenge + soft) that counts as a majority refusal. */
  threshold: z
    .number()
    .gt(0, { error: 'expected a number in (0, 1]' })
    .max(1, { error: 'expected a number in (0, 1]' })
    .default(0.5),
  /** …and at least this many times the site's normal refused share (its baseline's). */
  normalMultiple: z.number().min(1, { error: 'expected a number of at least 1' }).default(4),
  /** Refusing ticks in a row needed. */
  consecutiveTicks: z.int().min(1, { error: 'expected an integer of at least 1' }).default(2),
  /** Volume the current window needs to count. */
  minRequests: countSchema().default(50),
  /** Volume the recent window (the last `window.recentWindowMs`) needs to count. */
  minRecentRequests: countSchema().default(50),
});

const canaryConfigSchema = z.strictObject({
  /** Canary mismatches in one window that raise `canary_mismatch`. Canaries have known answers: 1. */
  minMismatches: z.int().min(1, { error: 'expected an integer of at least 1' }).default(1),
});

const SCORING_CONFIG_SCHEMA = z.strictObject({
  health: healthConfigSchema.prefault({}),
  parser: parserConfigSchema.prefault({}),
  cost: costConfigSchema.prefault({}),
  learning: learningConfigSchema.prefault({}),
  routes: routeConfigSchema.prefault({}),
  smoothing: smoothingConfigSchema.prefault({}),
  bands: bandConfigSchema.prefault({}),
  totalRefusal: totalRefusalConfigSchema.prefault({}),
  majorityRefusal: majorityRefusalConfigSchema.prefault({}),
  canary: canaryConfigSchema.prefault({}),
});

export type ScoringConfig = z.output<typeof SCORING_CONFIG_SCHEMA>;
/** A partial configuration: anything left out takes the default. */
export type ScoringConfigInput = z.input<typeof SCORING_CONFIG_SCHEMA>;
export type HealthConfig = ScoringConfig['health'];
export type HealthWeights = HealthConfig['weights'];
export type HealthCaps = HealthConfig['caps'];
export type ParserConfig = ScoringConfig['parser'];
export type CostConfig = ScoringConfig['cost'];
export type LearningConfig = ScoringConfig['learning'];
export type RouteConfig = ScoringConfig['routes'];
export type SmoothingConfig = ScoringConfig['smoothing'];
export type BandConfig = ScoringConfig['bands'];
export type TotalRefusalConfig = ScoringConfig['totalRefusal'];
export type MajorityRefusalConfig = ScoringConfig['majorityRefusal'];
export type CanaryConfig = ScoringConfig['canary'];

export class ScoringConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScoringConfigError';
  }
}

/** Validates a (partial) configuration and fills in defaults. Throws ScoringConfigError naming the field. */
export function parseScoringConfig(input: unknown = {}): ScoringConfig {
  const result = SCORING_CONFIG_SCHEMA.safeParse(input);
  if (!result.success) throw new ScoringConfigError(`invalid scoring config: ${formatIssues(result.error)}`);
  return result.data;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The product defaults, frozen so that no caller can change them for everyone else. */
export const DEFAULT_SCORING_CONFIG: ScoringConfig = deepFreeze(parseScoringConfig({}));

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const healthWeightsSchema = (): typeof HEALTH_WEIGHTS_SCHEMA => HEALTH_WEIGHTS_SCHEMA;
export const healthCapsSchema = (): typeof HEALTH_CAPS_SCHEMA => HEALTH_CAPS_SCHEMA;
export const scoringConfigSchema = (): typeof SCORING_CONFIG_SCHEMA => SCORING_CONFIG_SCHEMA;
