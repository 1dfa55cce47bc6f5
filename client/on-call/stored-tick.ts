/**
 * A tick's assessment as stored (`assessments.result`) or as the `state` query hands it back
 * (`lastAssessment`), read through zod: only the parts the on-call explanations use, each one checked,
 * the rest let through. Assessments stored before a rule existed lack its block (`majorityRefusal`,
 * `routeHold`, the route watch), so those are optional — an old row explains as far as it can.
 */
import { z } from 'zod';
import { HEALTH_BANDS } from '../../core/common/names';

const num = z.number();
const interval = z.object({ low: num, high: num });

export const rateSignalSchema = z.looseObject({
  kind: z.literal('rate'),
  weight: num,
  count: num,
  outOf: num,
  now: num,
  baseline: num,
  excess: num,
  cap: num,
  penalty: num,
  interval: z.object({ now: interval, baseline: interval }),
});
export type StoredRateSignal = z.output<typeof rateSignalSchema>;

export const latencySignalSchema = z.looseObject({
  kind: z.literal('latency'),
  weight: num,
  now: num,
  baseline: num,
  baselineFloored: num,
  ratio: num,
  excess: num,
  cap: num,
  penalty: num,
});

const groupStats = z.looseObject({ requests: num, failures: num, rate: num });

export const storedAssessmentSchema = z.looseObject({
  state: z.enum(['learning', 'insufficient-data', 'scored']),
  baseline: z.looseObject({
    ready: z.boolean(),
    baselineRequests: num,
    minBaselineRequests: num,
    detail: z.string().nullable(),
  }),
  health: z.looseObject({
    scope: z.enum(['site', 'healthy-routes']),
    window: z.looseObject({ requests: num }),
    score: num.nullable(),
    reasons: z.array(z.string()),
    explanation: z
      .looseObject({
        minRequests: num,
        requests: z.object({ current: num, baseline: num }),
        signals: z.looseObject({
          hard_block: rateSignalSchema,
          challenge: rateSignalSchema,
          soft_block: rateSignalSchema,
          latency: latencySignalSchema,
        }),
        penaltyTotal: num,
        unrounded: num,
      })
      .nullable(),
  }),
  parser: z.looseObject({
    score: num.nullable(),
    reasons: z.array(z.string()),
    explanation: z.looseObject({
      extractions: z.object({ current: num, baseline: num }),
      signals: z.record(z.string(), rateSignalSchema),
    }),
  }),
  cost: z.looseObject({
    status: z.string(),
    metrics: z.record(z.string(), z.looseObject({ now: num, baseline: num, ratio: num, used: z.boolean() })),
    reasons: z.array(z.string()),
    costRatio: num,
  }),
  routes: z.looseObject({
    verdict: z.string(),
    summary: z.string(),
    suspects: z.array(
      z.looseObject({ dimension: z.string(), value: z.string(), current: groupStats, rest: groupStats }),
    ),
    watching: z
      .array(z.looseObject({ dimension: z.string(), value: z.string(), ticks: num, confirmTicks: num }))
      .optional(),
    newlyConfirmed: z.array(z.string()).optional(),
  }),
  // recentRefusedShare and refusingWindow: absent from assessments stored before they existed.
  totalRefusal: z.looseObject({
    refusedShare: num,
    recentRefusedShare: num.nullable().optional(),
    refusingWindow: z.enum(['current', 'recent']).nullable().optional(),
    enoughVolume: z.boolean(),
    streak: num,
    totalRefusal: z.boolean(),
  }),
  majorityRefusal: z
    .looseObject({ normalShare: num.nullable(), currentShare: num, streak: num, majorityRefusal: z.boolean() })
    .optional(),
  routeHold: z
    .looseObject({ score: num, band: z.string(), routes: z.array(z.string()) })
    .nullable()
    .optional(),
  canary: z.looseObject({ runs: num, failures: num, mismatches: num, mismatch: z.boolean() }),
  reasons: z.array(z.string()),
});
export type StoredAssessment = z.output<typeof storedAssessmentSchema>;

export const storedTickSchema = z.looseObject({
  window: z.looseObject({
    currentFrom: z.string(),
    currentTo: z.string(),
    baselineFrom: z.string(),
    baselineTo: z.string(),
  }),
  assessment: storedAssessmentSchema,
  // The crawlers' canary requests of the current window; absent from ticks assessed before it existed.
  crawlerCanaries: z.looseObject({ requests: num, failed: num }).optional(),
  // The tick's scoring step (core/control/scoring-step.ts); absent from ticks stored before it was.
  scoring: z.looseObject({ smoothedScore: num.nullable(), scoredBand: z.enum(HEALTH_BANDS) }).optional(),
});
export type StoredTick = z.output<typeof storedTickSchema>;

/** `value` as a stored tick, or why it is not one (the first problem, with its path). */
export function readStoredTick(value: unknown): { ok: true; tick: StoredTick } | { ok: false; problem: string } {
  const parsed = storedTickSchema.safeParse(value);
  if (parsed.success) return { ok: true, tick: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, problem: `${issue.path.join('.') || '(root)'}: ${issue.message}` };
}
