/**
 * Everything the per-site loop remembers between ticks, as one zod schema: it is the workflow's state,
 * what the `state` query shows, and what continue-as-new carries to the next run (validated there like
 * any other input, so a hand-edited or truncated carry fails loudly instead of resetting a paused site).
 */
import { z } from 'zod';
import { HEALTH_BANDS, type HealthBand } from '../common/names';
import { INITIAL_SITE_STATE } from '../scoring/site-state';
import { routeWatchSchema } from '../scoring/route-watch';
import { controlsSchema } from './controls';
import { DECISION_KINDS, resumeModeSchema } from './decisions';

/** Ticks kept for the `history` query, notifications and the next run. */
export const HISTORY_LIMIT = 50;
/** Signals refused (bad payload, not allowed now) kept for the `state` query. */
export const REJECTED_LIMIT = 5;

const band = z.enum(HEALTH_BANDS);
const isoTime = z.string().min(1);

const scoringStateSchema = z.strictObject({
  smoothed: z.strictObject({ value: z.number().nullable(), pendingMs: z.number().min(0) }),
  band: band.nullable(),
  refusalStreak: z.int().min(0),
  /** Absent in states carried from before these rules (read as 0 and an empty watch). */
  majorityStreak: z.int().min(0).optional(),
  routeWatch: routeWatchSchema().optional(),
});

const AWAITING_SCHEMA = z.strictObject({
  /** `resisting`: the band paused the site; `manual`: a person paused it with `pause`. */
  kind: z.enum(['resisting', 'manual']),
  /** Database time of the pause. */
  since: isoTime,
  reason: z.string(),
  pausedBy: z.string().nullable(),
  /** The assessment that led to the pause (the decision rows point at it). */
  assessmentKey: z.string().nullable(),
  remindersSent: z.int().min(0),
  /** Database time of the last notification or reminder about this wait. */
  lastNotifiedAt: isoTime,
});
export type AwaitingHuman = z.output<typeof AWAITING_SCHEMA>;

const DECISION_SUMMARY_SCHEMA = z.strictObject({
  decisionKey: z.string(),
  kind: z.enum(DECISION_KINDS),
  who: z.string(),
  why: z.string(),
  mode: resumeModeSchema().nullable(),
  via: z.enum(['signal', 'update']),
  decidedAt: isoTime,
  assessmentKey: z.string().nullable(),
});
export type DecisionSummary = z.output<typeof DECISION_SUMMARY_SCHEMA>;

/**
 * Why the loop cannot do its job right now. `assessment_failed`: a tick's assessment failed on its data
 * (a value the database or the scoring cannot take) — not retried, so the site's loop is never wedged;
 * the loop says so (state, `LoopProblem` search attribute, one notice per episode), keeps its other
 * duties (decisions, canaries, reminders) and tries again on the next tick.
 */
const LOOP_PROBLEM_SCHEMA = z.strictObject({
  kind: z.enum(['assessment_failed']),
  /** Workflow time of the first failed tick of this episode. */
  since: isoTime,
  /** Failed ticks in a row. */
  ticks: z.int().min(1),
  /** The latest failure, in words (bounded). */
  message: z.string(),
});
export type LoopProblem = z.output<typeof LOOP_PROBLEM_SCHEMA>;

const TICK_SUMMARY_SCHEMA = z.strictObject({
  tick: z.int().min(1),
  assessedAt: isoTime,
  /** `failed`: the tick could not be assessed (see the loop's `problem`). */
  state: z.enum(['learning', 'insufficient-data', 'scored', 'failed']),
  score: z.number().nullable(),
  smoothedScore: z.number().nullable(),
  /** The loop's band after this tick (frozen while awaiting a person). */
  band,
  /** The band the smoothed score alone gives. */
  scoredBand: band,
  parserHealth: z.number().nullable(),
  reasons: z.array(z.string()),
  routeVerdict: z.string(),
  /** What the tick did, in words ("concurrency 12→9", "notified owner"). */
  actions: z.array(z.string()),
});
export type TickSummary = z.output<typeof TICK_SUMMARY_SCHEMA>;

const bandCounts = z.strictObject(
  Object.fromEntries(HEALTH_BANDS.map((b) => [b, z.int().min(0).default(0)])) as Record<
    HealthBand,
    z.ZodDefault<z.ZodInt>
  >,
);

const LOOP_STATE_SCHEMA = z.strictObject({
  /** First run id of the chain: stable across continue-as-new, part of every idempotency key. */
  chainId: z.string().min(1),
  tick: z.int().min(0),
  /** Runs of this chain so far, this one included. */
  runs: z.int().min(1),
  scoring: scoringStateSchema,
  lastAssessedAt: isoTime.nullable(),
  lastAssessmentKey: z.string().nullable(),
  /** The loop's band: what the controls are set for (HealthBand search attribute). */
  band,
  /** The band the latest smoothed score gives on its own (differs from `band` while paused). */
  scoredBand: band,
  score: z.number().nullable(),
  smoothedScore: z.number().nullable(),
  parserHealth: z.number().nullable(),
  reasons: z.array(z.string()),
  controls: controlsSchema().nullable(),
  awaiting: AWAITING_SCHEMA.nullable(),
  lastDecision: DECISION_SUMMARY_SCHEMA.nullable(),
  /** Decisions received so far in this chain (numbers their idempotency keys). */
  decisionSeq: z.int().min(0),
  /** Settings changes (`configure`) received so far in this chain (numbers their keys). Absent before them. */
  settingsSeq: z.int().min(0).default(0),
  /** After a resume only traffic from the decision on is judged (database time), null otherwise. */
  evidenceSince: isoTime.nullable(),
  alerts: z.strictObject({ parser: z.boolean(), route: z.boolean() }),
  history: z.array(TICK_SUMMARY_SCHEMA).max(HISTORY_LIMIT),
  bandTicks: bandCounts,
  rejected: z.array(z.string()).max(REJECTED_LIMIT),
  firstAssessedAt: isoTime.nullable(),
  /** Absent in states carried by runs before it existed. */
  problem: LOOP_PROBLEM_SCHEMA.nullable().default(null),
  /** The next tick's slot (workflow time, ISO): a continued run waits for it. Null before the first tick. */
  nextTickAt: isoTime.nullable().default(null),
  /**
   * Time spent in the band since its last throttle or restore step, not yet worth a step (steps are
   * paced in time, `policy.steps`). Absent in states carried by runs before it existed.
   */
  stepCreditMs: z.number().min(0).default(0),
  /** Parser health below its alert threshold since (first such tick) and for how many scored ticks; null otherwise. */
  parserBelow: z
    .strictObject({ since: isoTime, ticks: z.int().min(1) })
    .nullable()
    .default(null),
  /**
   * Why the latest tick has no health score: `learning` (the baseline is not usable yet) or
   * `insufficient-data` (a usable baseline, too little current traffic), in words; null when scored.
   */
  noScore: z
    .strictObject({ state: z.enum(['learning', 'insufficient-data']), detail: z.string() })
    .nullable()
    .default(null),
  /**
   * Why the latest tick held the band and the smoothed score (routes pulling the score down are being
   * confirmed as a route problem), in words; null when it did not.
   */
  heldFor: z.string().max(2_000).nullable().default(null),
});
export type LoopState = z.output<typeof LOOP_STATE_SCHEMA>;

export function initialLoopState(chainId: string): LoopState {
  return {
    chainId,
    tick: 0,
    runs: 1,
    scoring: { smoothed: { ...INITIAL_SITE_STATE.smoothed }, band: null, refusalStreak: 0 },
    lastAssessedAt: null,
    lastAssessmentKey: null,
    band: 'learning',
    scoredBand: 'learning',
    score: null,
    smoothedScore: null,
    parserHealth: null,
    reasons: [],
    controls: null,
    awaiting: null,
    lastDecision: null,
    decisionSeq: 0,
    settingsSeq: 0,
    evidenceSince: null,
    alerts: { parser: false, route: false },
    history: [],
    bandTicks: { learning: 0, healthy: 0, degrading: 0, resisting: 0, stopped: 0 },
    rejected: [],
    firstAssessedAt: null,
    problem: null,
    nextTickAt: null,
    stepCreditMs: 0,
    parserBelow: null,
    noScore: null,
    heldFor: null,
  };
}

export function pushBounded<T>(list: T[], item: T, limit: number): T[] {
  const next = [...list, item];
  return next.length > limit ? next.slice(next.length - limit) : next;
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const awaitingSchema = (): typeof AWAITING_SCHEMA => AWAITING_SCHEMA;
export const decisionSummarySchema = (): typeof DECISION_SUMMARY_SCHEMA => DECISION_SUMMARY_SCHEMA;
export const loopProblemSchema = (): typeof LOOP_PROBLEM_SCHEMA => LOOP_PROBLEM_SCHEMA;
export const tickSummarySchema = (): typeof TICK_SUMMARY_SCHEMA => TICK_SUMMARY_SCHEMA;
export const loopStateSchema = (): typeof LOOP_STATE_SCHEMA => LOOP_STATE_SCHEMA;
