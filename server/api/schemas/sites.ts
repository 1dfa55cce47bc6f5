/**
 * The zod schemas of the sites and decisions routes: what the handlers validate with and what the
 * OpenAPI document shows (server/api/openapi.ts), so the two cannot drift apart. Requests are strict (an
 * unknown field or query parameter is refused by name: a typo must not silently widen a listing).
 */
import { z } from 'zod';
import { HEALTH_BANDS } from '../../../core/common/names';
import { controlsSchema } from '../../../core/control/controls';
import { DECISION_KINDS } from '../../../core/control/decisions';

/** Bands a running loop can be in (a stopped loop's workflow has ended, so it is not listed). */
export const LISTED_BANDS = HEALTH_BANDS.filter((b) => b !== 'stopped') as [
  'learning',
  'healthy',
  'degrading',
  'resisting',
];

const limit = (max: number, fallback: number) =>
  z.coerce
    .number({ error: `expected a whole number 1-${max}` })
    .int({ error: `expected a whole number 1-${max}` })
    .min(1, { error: `expected a whole number 1-${max}` })
    .max(max, { error: `expected a whole number 1-${max}` })
    .default(fallback)
    .describe(`page size (1-${max}, default ${fallback})`);
const cursor = z
  .string({ error: 'expected the `next` cursor of the previous page' })
  .min(1)
  .max(4096, { error: 'is not a cursor of this endpoint (too long)' })
  .optional()
  .describe('the `next` value of the previous page');

export const siteParamsSchema = z.strictObject({
  site: z.string().describe('the site, a host name such as shop.example.com (normalised like the CLI does)'),
});

export const siteListQuerySchema = z.strictObject({
  band: z
    .enum(LISTED_BANDS, {
      error: `expected one of ${LISTED_BANDS.join(', ')} (a stopped loop has ended and is not listed)`,
    })
    .optional()
    .describe('only sites in this band'),
  awaiting: z
    .enum(['true', 'false'], { error: 'expected true or false' })
    .optional()
    .describe('true: only sites waiting for a person; false: only sites not waiting'),
  limit: limit(500, 100),
  cursor,
});

export const siteSummarySchema = z.object({
  site: z.string(),
  workflowId: z.string(),
  band: z.enum(HEALTH_BANDS).nullable(),
  /** The latest tick's raw score (from the assessments table). */
  score: z.number().nullable(),
  /** The smoothed score the bands are judged on (the HealthScore search attribute). */
  smoothedScore: z.number().nullable(),
  parserHealth: z.number().nullable(),
  awaitingHuman: z.boolean(),
  /** Since when the site waits for a person (the loop's state), null when not waiting. */
  awaitingSince: z.string().nullable(),
  /** Why the loop cannot do its job right now (LoopProblem), or null. */
  problem: z.string().nullable(),
  loopStartedAt: z.string().nullable(),
  lastAssessedAt: z.string().nullable(),
  /** Present only when the loop's state could not be read for a waiting site (awaitingSince is then null). */
  stateUnavailable: z.string().optional(),
  /**
   * The latest change of the site's controls (control_audit): when, by whom, what changed and why; null before the
   * first.
   */
  lastChange: z
    .object({
      at: z
        .string()
        .describe("when it took effect: the tick's time for a change the loop made, else when it was written"),
      actor: z.string().describe('`control-loop`, or `human:<who>` for a decision'),
      change: z.string().describe('what changed, e.g. `concurrency 12→9, band healthy→degrading`'),
      reason: z.string(),
      version: z.number().describe('the controls version it produced'),
    })
    .nullable(),
});
export type SiteSummary = z.output<typeof siteSummarySchema>;

export const siteListSchema = z.object({
  sites: z.array(siteSummarySchema),
  next: z.string().nullable().describe('cursor of the next page; null on the last page'),
});

/**
 * `state` as the workflow answers it (loop/messages.ts SiteHealthState); documented loosely, it is the loop's own
 * shape.
 */
export const siteStateSchema = z
  .looseObject({
    site: z.string(),
    band: z.enum(HEALTH_BANDS),
    score: z.number().nullable(),
    smoothedScore: z.number().nullable(),
    parserHealth: z.number().nullable(),
    awaitingHuman: z.looseObject({ kind: z.string(), since: z.string(), reason: z.string() }).nullable(),
  })
  .describe(
    'the loop state, as `target-health status --json` prints it (docs/control-loop.md, "Queries"), with ' +
      '`history`: the recent ticks',
  );

export const assessmentsQuerySchema = z.strictObject({
  from: z.iso
    .datetime({ offset: true, error: 'expected an ISO-8601 time such as 2025-03-01T00:00:00Z' })
    .optional()
    .describe('from this time (inclusive)'),
  to: z.iso
    .datetime({ offset: true, error: 'expected an ISO-8601 time such as 2025-03-02T00:00:00Z' })
    .optional()
    .describe('until this time (exclusive)'),
  limit: limit(1000, 100),
  cursor,
  detail: z
    .enum(['summary', 'full'], { error: 'expected summary or full' })
    .default('summary')
    .describe('full: each row carries the stored tick assessment (`result`)'),
});

export const assessmentRowSchema = z.object({
  assessmentKey: z.string(),
  workflowId: z.string(),
  chainId: z.string().nullable(),
  tick: z.number(),
  assessedAt: z.string(),
  state: z.string().nullable(),
  score: z.number().nullable(),
  smoothedScore: z
    .number()
    .nullable()
    .describe(
      'the rounded smoothed score the band was judged on; null before the site had one, or for a tick ' +
        'stored before it was',
    ),
  scoredBand: z
    .enum(HEALTH_BANDS)
    .nullable()
    .describe("the band the score put the site in (before the loop's gate); null for a tick stored before it was"),
  parserHealth: z.number().nullable(),
  reasons: z.array(z.string()),
  result: z.unknown().optional(),
});
export const assessmentPageSchema = z.object({
  site: z.string(),
  assessments: z.array(assessmentRowSchema),
  next: z.string().nullable(),
});

/** `POST /v1/sites/{site}/loop`: owners and the loop's settings (what `target-health start --config` reads). */
export const startLoopBodySchema = z
  .strictObject({
    owner: z.string().min(1).max(200).optional().describe("who is notified when the site degrades (the crawl's owner)"),
    parserOwner: z.string().min(1).max(200).optional().describe("who is notified when the site's parser health falls"),
    config: z
      .record(z.string(), z.unknown(), {
        error: 'expected a JSON object like {"tickIntervalMs": 60000, "policy": {"concurrency": {"nominal": 8}}}',
      })
      .optional()
      .describe(
        'the loop settings: tickIntervalMs, window, scoring, policy, timeouts, maxTicksPerRun ' +
          '(docs/control-loop.md, "Configuration"); defaults as `target-health start`',
      ),
  })
  .optional();
export const startLoopResultSchema = z.object({
  site: z.string(),
  workflowId: z.string(),
  runId: z.string(),
  tickIntervalMs: z.number(),
});

/** `POST /v1/sites/{site}/decisions`: the decision; `who` is the token's name. */
export const decisionBodySchema = z.strictObject({
  kind: z
    .enum(DECISION_KINDS, { error: `expected one of ${DECISION_KINDS.join(', ')}` })
    .describe('resume (only while the site waits), pause, or stop'),
  why: z
    .string({ error: 'required: why, in a sentence (it goes into the audit trail)' })
    .describe('why, in a sentence (audit trail)'),
  mode: z
    .enum(['cautious', 'explicit'], { error: 'expected cautious or explicit' })
    .optional()
    .describe('resume only: cautious (default) or explicit'),
  concurrency: z
    .number({ error: 'expected a whole number 1-10000' })
    .optional()
    .describe('resume, explicit: the concurrency limit'),
  revisitMultiplier: z
    .number({ error: 'expected a number 1-100' })
    .optional()
    .describe('resume, explicit: the revisit-interval multiplier'),
});

export const decisionResultSchema = z.object({
  decision: z.enum(DECISION_KINDS),
  decisionKey: z.string(),
  decidedAt: z.string(),
  band: z.enum(HEALTH_BANDS),
  controls: controlsSchema().nullable(),
  message: z.string(),
});

export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string().describe('one line naming the field and the fix') }),
});
