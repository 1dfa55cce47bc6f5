/**
 * What a review holds, as one document: the Markdown (client/review/render.ts) is written from it, and
 * `review --json` prints it. Times are ISO-8601 strings, durations milliseconds, rates 0–1.
 */
import { recordSourceSchema } from '../loop-record/source';
import { z } from 'zod';
import { HEALTH_BANDS } from '../../core/common/names';
import { bandCauseSchema } from '../on-call/band-cause-schema';
import { ACTION_KINDS } from '../../core/control/action-runs';
import { alertSchema } from '../../core/control/alerts';

const band = z.enum(HEALTH_BANDS);
const iso = z.string();

export const rateSpanSchema = z.object({
  requests: z.number(),
  refusals: z.number(),
  rate: z.number().nullable(),
  perMinute: z.number(),
});

export const bandChangeSchema = z.object({
  at: iso,
  from: band.nullable(),
  to: band,
  actor: z.string(),
  /** The control change's reason (control_audit). */
  reason: z.string(),
  /** The tick's raw score and reasons, most important first (assessments), when a tick made the change. */
  score: z.number().nullable(),
  /** That tick's smoothed score, stored with it (null for a tick stored before it was, or without one). */
  smoothedScore: z.number().nullable(),
  reasons: z.array(z.string()),
  /** What put the site in `to` (core/control/band-wording.ts): the tick's refusal rule or score, or a person. */
  cause: bandCauseSchema,
});

/** Did the action help (client/review/actions.ts `actionEffect`). */
export const actionEffectSchema = z.object({
  /**
   * After a throttle, a pause or a stop: did the crawler's requests per minute fall (by 10 % or more); null for
   * actions that do not slow it down (restore, resume, change) or without traffic before.
   */
  obeyed: z.boolean().nullable(),
  /** The refusal share after against before (2 points or more), null when either had no traffic. */
  refusals: z.enum(['fell', 'rose', 'held']).nullable(),
  /** The verdict in words, with the caveat when only canaries were sent after a pause. */
  verdict: z.string(),
});

export const actionSchema = z.object({
  kind: z.enum(ACTION_KINDS),
  /** First and last change of the run (consecutive changes by the same actor into the same band). */
  from: iso,
  to: iso,
  steps: z.number().int(),
  actor: z.string(),
  /** The run's net change, e.g. `concurrency 16→5, revisit ×1→×3.38, band healthy→degrading`. */
  change: z.string(),
  reason: z.string(),
  /** Refusals in the ACTION_SPAN_MS before the run's first change and after its last. */
  before: rateSpanSchema,
  after: rateSpanSchema,
  effect: actionEffectSchema,
});

/** A moment of the incident against its onset and the minute refusals passed half (positive: after it). */
export const milestoneSchema = z.object({
  at: iso,
  afterOnsetMs: z.number().nullable(),
  afterHalfMs: z.number().nullable(),
});

/** The seed's first question from the onset (client/review/onset.ts). */
export const earlySchema = z.object({
  /** The first minute the refusal share or the latency left the site's normal, and which of them. */
  onset: z.object({ at: iso, signal: z.enum(['refusals', 'latency', 'refusals and latency']) }).nullable(),
  /** The normal the onset was judged against (the loop's 14-day baseline), null parts without one. */
  normal: z.object({ refusalShare: z.number().nullable(), p95LatencyMs: z.number().nullable() }),
  /** The first minute the 5-minute refusal share passed half, null when it never did. */
  refusedHalfAt: iso.nullable(),
  /** The health signals of the tick that moved the band to its worst: what the incident ends up with. */
  reasons: z.array(z.string()),
  /** The first tick naming one of those reasons, and the first naming all of them. */
  firstSign: milestoneSchema.nullable(),
  firstEvidence: milestoneSchema.nullable(),
  firstDegrade: milestoneSchema.nullable(),
  firstPause: milestoneSchema.nullable(),
  /** The pause came more than 5 minutes after refusals passed half. */
  pauseLate: z.boolean(),
});

export const decisionSchema = z.object({
  at: iso,
  who: z.string(),
  kind: z.string(),
  why: z.string(),
  /** Resume mode (`cautious`, or `explicit` with its figures), null for other kinds. */
  mode: z.string().nullable(),
  /** How long the site had waited for a person when they decided, when it was waiting. */
  waitedMs: z.number().nullable(),
});

export const runFiguresSchema = z.object({
  name: z.string(),
  /** What the settings are, in words (`current settings`, `smoothing half-life 5 min (current 10 min)`). */
  description: z.string(),
  firstDegradeAt: iso.nullable(),
  firstPauseAt: iso.nullable(),
  /** First warning before refusals peaked (positive: before), null without a warning or a peak. */
  leadMs: z.number().nullable(),
  /** First warning and first pause after the incident's onset (negative: before it), null without either. */
  warnAfterOnsetMs: z.number().nullable(),
  pauseAfterOnsetMs: z.number().nullable(),
  /** Ticks throttled or paused (the backtest's measure). */
  throttledTicks: z.number().int(),
  /** Ticks in degrading or resisting. */
  warningTicks: z.number().int(),
  notices: z.number().int(),
});

/** One run over the quiet days: moves into degrading or resisting, pauses, throttled ticks. */
export const quietFiguresSchema = z.object({
  degrades: z.number().int(),
  pauses: z.number().int(),
  throttledTicks: z.number().int(),
});

export const candidateSchema = runFiguresSchema.extend({
  /**
   * Ticks where the replay differs from the current settings' (`replay --compare`), and those in band, reasons,
   * controls or notices.
   */
  differences: z.number().int(),
  importantDifferences: z.number().int(),
  /** Warned earlier by this much (negative: later), null when either never warned. */
  earlierByMs: z.number().nullable(),
  /** Throttled ticks fewer than the current settings' (negative: more). */
  throttledLess: z.number().int(),
  /**
   * Why this candidate is no comparison with the current settings (a replay had not settled before the incident or
   * their first difference: client/review/settle.ts), null when it is one.
   */
  noComparison: z.string().nullable(),
  /** Over the quiet days: its own false alarms and those it adds to the current settings'; null: none replayed. */
  quiet: quietFiguresSchema.extend({ addedDegrades: z.number().int(), addedPauses: z.number().int() }).nullable(),
});

/** What to tune, in one sentence: a recommendation, a trade-off, nothing better, or no comparison. */
export const headlineSchema = z.object({
  kind: z.enum(['recommend', 'trade-off', 'unchecked', 'none', 'no-comparison']),
  /** The candidate the sentence is about, when one. */
  candidate: z.string().nullable(),
  text: z.string(),
});

export const quietDaySchema = z.object({
  /** The UTC day, `2026-11-21`. */
  day: z.string(),
  /** What called it quiet: the live loop's band changes (control_audit), or the current settings' replay. */
  judgedBy: z.enum(['live', 'replay']),
  ticks: z.number().int(),
  scoredTicks: z.number().int(),
});

export const quietDaysSchema = z.object({
  /** How many were asked for (`--quiet-days`). */
  wanted: z.number().int(),
  days: z.array(quietDaySchema),
  /** Whole UTC days looked at (most recent first), and in words why fewer than wanted were found, or null. */
  examined: z.number().int(),
  shortfall: z.string().nullable(),
  tickMs: z.number().int(),
  current: quietFiguresSchema.nullable(),
});

export const tuningSchema = z.object({
  from: iso,
  to: iso,
  tickMs: z.number().int(),
  /**
   * Where the current settings came from, as said after "once with": `the settings of <file>` (--config), `the
   * running loop's settings (site-health:<site>)`, or `the product defaults (no --config given; <why no loop>)`.
   */
  settingsFrom: z.string(),
  current: runFiguresSchema,
  candidates: z.array(candidateSchema),
  /** The candidate that warned earliest / throttled least, when one did better than the current settings. */
  warnedEarliest: z.string().nullable(),
  throttledLeast: z.string().nullable(),
  /** The incident's onset the runs' first warnings are measured from (the review's early.onset), or null. */
  onsetAt: iso.nullable(),
  /**
   * Where the incident starts for the replays: the onset, or the window's start when earlier. The runs' first
   * warnings and pauses count from here, and they must have settled here (client/review/settle.ts).
   */
  incidentFrom: iso,
  quietDays: quietDaysSchema,
  headline: headlineSchema,
});

export const reviewSchema = z.object({
  site: z.string(),
  /** The live loop's stored ticks, or a replay made for the review (client/loop-record/source.ts). */
  source: recordSourceSchema,
  incidentAt: iso,
  window: z.object({ from: iso, to: iso, openStart: z.boolean(), openEnd: z.boolean(), durationMs: z.number() }),
  worstBand: band,
  ticks: z.number().int(),
  refusals: z.object({
    /** The rollup level the rates come from (`minute`; `hour` once the minutes are past retention). */
    level: z.enum(['minute', 'hour']),
    peak: z.object({ rate: z.number(), at: iso, reachedAt: iso }).nullable(),
    during: rateSpanSchema,
  }),
  /** First warning band change → refusals peaked. */
  lead: z.object({ firstWarningAt: iso, peakReachedAt: iso, ms: z.number() }).nullable(),
  /** Did the score move early enough: the incident's milestones from its onset. */
  early: earlySchema,
  timeline: z.array(bandChangeSchema),
  /** Route and parser alerts raised in the window: the reasons beside the band's. */
  alerts: z.array(alertSchema),
  actions: z.array(actionSchema),
  decisions: z.array(decisionSchema),
  /** Canary evidence over the window: the product's canary runs by result, and the crawlers' own canary requests. */
  canaries: z.object({
    product: z.object({
      pass: z.number().int(),
      mismatch: z.number().int(),
      blocked: z.number().int(),
      error: z.number().int(),
    }),
    crawler: z.object({ requests: z.number().int(), failed: z.number().int() }),
  }),
  /** The chart beside the review (its path relative to the Markdown), or null with why. */
  chart: z.object({ file: z.string().nullable(), note: z.string() }),
  tuning: tuningSchema,
});

export type RateSpanJson = z.output<typeof rateSpanSchema>;
export type BandChangeRow = z.output<typeof bandChangeSchema>;
export type ActionRow = z.output<typeof actionSchema>;
export type ActionEffect = z.output<typeof actionEffectSchema>;
export type MilestoneJson = z.output<typeof milestoneSchema>;
export type Early = z.output<typeof earlySchema>;
export type DecisionRow = z.output<typeof decisionSchema>;
export type RunFigures = z.output<typeof runFiguresSchema>;
export type CandidateFigures = z.output<typeof candidateSchema>;
export type Tuning = z.output<typeof tuningSchema>;
export type QuietFigures = z.output<typeof quietFiguresSchema>;
export type QuietDays = z.output<typeof quietDaysSchema>;
export type Headline = z.output<typeof headlineSchema>;
export type Review = z.output<typeof reviewSchema>;
