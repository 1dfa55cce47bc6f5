/**
 * `target-health status <site>` explained, the pure part: what the loop will do next and why (with the
 * exact commands a person can run), the site's canaries, the score trend, and the `--json` schema. The
 * state comes from the loop's `state` query; the rest from PostgreSQL (client/commands/status.ts).
 */
import { z } from 'zod';
import { HEALTH_BANDS } from '../../core/common/names';
import { controlsSchema } from '../../core/control/controls';
import {
  awaitingSchema,
  decisionSummarySchema,
  loopProblemSchema,
  tickSummarySchema,
} from '../../core/control/loop-state';
import type { SiteHealthState } from '../../loop/messages';
import { nextSlot, phaseMs } from '../../core/control/schedule';
import { formatCrawlerCanaries } from '../../core/canaries/latest';
import { type BandCause, bandAction, bandCause, bandPhrase } from '../../core/control/band-wording';
import { plural } from '../../core/common/plural';
import { bandCauseSchema } from './band-cause-schema';
import { addCanaryCommand } from './canary-hint';
import { tickExplanationSchema } from './explain';
import { trendSchema } from '../../server/fleet/trend';

// --- What the loop does next -----------------------------------------------------------------------

export const nextStepSchema = z.object({
  /**
   * When the next tick is due: its slot on the tick grid after the latest one, plus the site's phase; null before the
   * first.
   */
  nextTickAt: z.string().nullable(),
  /** What the loop will do at its next ticks, in words. */
  plan: z.string(),
  /** Why. */
  why: z.string(),
  /** The loop waits for a person's decision. */
  awaitingHuman: z.boolean(),
  /** Commands a person can run now, exactly (placeholders in <>). */
  commands: z.array(z.string()),
});
export type NextStep = z.output<typeof nextStepSchema>;

export const canaryStatusSchema = z.object({
  /** Canaries defined for the site (ids). */
  defined: z.array(z.string()),
  /** Each defined canary's latest run (absent: not run since it was defined or edited). */
  latest: z.array(z.object({ canaryId: z.string(), result: z.string(), ranAt: z.string(), reason: z.string() })),
  /**
   * Canary requests the crawlers sent themselves (`canary: true` events) in the latest tick's current
   * window [from, to), and how many got no normal page; null before the first tick, or for a tick
   * assessed before they were counted.
   */
  crawler: z.object({ requests: z.number(), failed: z.number(), from: z.string(), to: z.string() }).nullable(),
});
export type CanaryStatus = z.output<typeof canaryStatusSchema>;

export type StateForNext = Pick<
  SiteHealthState,
  | 'site'
  | 'band'
  | 'scoredBand'
  | 'score'
  | 'smoothedScore'
  | 'reasons'
  | 'noScore'
  | 'heldFor'
  | 'awaitingHuman'
  | 'problem'
  | 'pendingDecisions'
  | 'tickIntervalMs'
  | 'lastAssessedAt'
  | 'controls'
>;

/** `target-health decide resume|stop <site>` as a person types them. */
export function decideCommands(site: string): string[] {
  return [
    `target-health decide resume ${site} --who <you> --why "<why>"   (cautious controls; or --mode explicit ` +
      `--concurrency <n> --revisit <x>)`,
    `target-health decide stop ${site} --who <you> --why "<why>"`,
  ];
}

/**
 * What put the loop in its band, from the reasons of the tick that set it: while the loop waits after a pause
 * the band is frozen, so that is the pausing tick (`pauseReasons`, read from its stored assessment), not the
 * latest one; a pause by hand is that person's; otherwise the latest tick set the band.
 */
export function statusBandCause(
  s: Pick<StateForNext, 'band' | 'reasons' | 'awaitingHuman'>,
  pauseReasons: string[] | null,
): BandCause {
  if (s.awaitingHuman?.kind === 'manual') return { kind: 'person' };
  return bandCause(s.band, pauseReasons ?? s.reasons);
}

/**
 * The loop's next move from its state: each tick assesses, then — in this order — a wait for a person
 * freezes everything, a failing assessment changes nothing, a hold (routes being confirmed, no score)
 * keeps band and controls, and otherwise the band's policy applies (core/control/plan/band.ts). `cause`:
 * what put the loop in its band (statusBandCause).
 */
export function whatNext(
  s: StateForNext,
  canaries: CanaryStatus,
  cause: BandCause = statusBandCause(s, null),
): NextStep {
  // The next slot after the latest tick, plus the site's phase (when the loop wakes: core/control/schedule.ts).
  const nextTickAt =
    s.lastAssessedAt === null
      ? null
      : new Date(
          nextSlot(Date.parse(s.lastAssessedAt), s.tickIntervalMs) + phaseMs(s.site, s.tickIntervalMs),
        ).toISOString();
  const queued =
    s.pendingDecisions > 0 ? `; ${plural(s.pendingDecisions, 'decision')} queued, applied before the next tick` : '';
  const smoothed = s.smoothedScore === null ? 'no smoothed score' : `smoothed ${s.smoothedScore}`;
  const reasons = s.reasons.length > 0 ? `reasons ${s.reasons.join(', ')}` : 'no reasons';
  const phrase = bandPhrase({ band: s.band, reasons: s.reasons, score: s.score, smoothedScore: s.smoothedScore });
  const w = s.awaitingHuman;
  if (w !== null) {
    const who =
      w.kind === 'resisting'
        ? (bandAction('resisting', cause) ?? 'paused by the loop')
        : `paused by hand${w.pausedBy === null ? '' : ` by ${w.pausedBy}`}`;
    const crawler =
      canaries.crawler !== null && canaries.crawler.requests > 0
        ? formatCrawlerCanaries(canaries.crawler, canaries.crawler)
        : null;
    const evidence =
      canaries.defined.length === 0
        ? crawler !== null
          ? `no canary of its own is defined; the crawler's canaries are the evidence: ${crawler}`
          : 'it has NO canary defined: while paused there is no traffic, so nothing shows whether the site ' +
            'calmed down — add one (below)'
        : (s.noScore !== null
            ? `no score while paused (${s.noScore.detail}); the canaries are the evidence (below)`
            : `the score alone now says ${s.scoredBand} (${smoothed})`) + (crawler !== null ? `; ${crawler}` : '');
    return {
      nextTickAt,
      plan:
        `waits for a person: keeps assessing every ` +
        `tick${canaries.defined.length > 0 ? ' and running its canaries' : ''}, reminds the owner, changes ` +
        `nothing on its own${queued}`,
      why: `${who} since ${w.since}: ${w.reason}; ${evidence}`,
      awaitingHuman: true,
      commands: [...decideCommands(s.site), ...(canaries.defined.length === 0 ? [addCanaryCommand(s.site)] : [])],
    };
  }
  const next = (plan: string, why: string): NextStep => ({
    nextTickAt,
    plan: plan + queued,
    why,
    awaitingHuman: false,
    commands: [],
  });
  if (s.band === 'stopped')
    return { ...next('nothing: the loop was stopped', 'a person decided stop'), nextTickAt: null };
  if (s.problem !== null)
    return next(
      'tries the assessment again at the next tick; band and controls stay as they are',
      `assessments failing since ${s.problem.since} (${plural(s.problem.ticks, 'tick')}): ${s.problem.message}`,
    );
  if (s.heldFor !== null)
    return next('holds the band and the controls until the routes are confirmed (set aside) or cleared', s.heldFor);
  if (s.noScore?.state === 'learning')
    return next('keeps the initial controls; judges the site once its baseline is usable', s.noScore.detail);
  if (s.noScore?.state === 'insufficient-data')
    return next('holds the band and the controls: no fresh evidence to act on', s.noScore.detail);
  switch (s.band) {
    case 'degrading':
      return next(
        "throttles one step more each time the policy's pace falls due (policy.steps.degradeEveryMs) while " +
          'degrading; restores step by step once healthy',
        `${phrase}; ${reasons}`,
      );
    case 'resisting':
      return next('pauses the site and waits for a person', `${phrase}; ${reasons}`);
    case 'healthy':
      return next(
        'keeps the usual pace (a throttled site is restored step by step, policy.steps.restoreEveryMs)',
        `${phrase}${s.reasons.length > 0 ? `; reasons below the band's threshold: ${s.reasons.join(', ')}` : ''}`,
      );
    case 'learning':
      return next('keeps the initial controls until the first score', 'no score yet');
  }
}

// --- `--json` -----------------------------------------------------------------------------------------

/** The `state` query's answer (docs/control-loop.md, "Queries"); the latest assessment let through as is. */
export const siteStateSchema = z.object({
  site: z.string(),
  chainId: z.string(),
  runs: z.number().int(),
  tick: z.number().int(),
  tickIntervalMs: z.number().int(),
  band: z.enum(HEALTH_BANDS),
  scoredBand: z.enum(HEALTH_BANDS),
  score: z.number().nullable(),
  smoothedScore: z.number().nullable(),
  noScore: z.object({ state: z.enum(['learning', 'insufficient-data']), detail: z.string() }).nullable(),
  heldFor: z.string().nullable(),
  parserHealth: z.number().nullable(),
  reasons: z.array(z.string()),
  controls: controlsSchema().nullable(),
  awaitingHuman: awaitingSchema().nullable(),
  lastDecision: decisionSummarySchema().nullable(),
  routeDiagnosis: z.object({ verdict: z.string(), summary: z.string() }).nullable(),
  alerts: z.object({ parser: z.boolean(), route: z.boolean() }),
  rejected: z.array(z.string()),
  pendingDecisions: z.number().int(),
  lastAssessedAt: z.string().nullable(),
  lastAssessment: z.looseObject({ assessmentKey: z.string(), tick: z.number() }).nullable(),
  canaries: z.looseObject({}).nullable(),
  problem: loopProblemSchema().nullable(),
});

/** `status --json`: the state and recent ticks as before, plus `explained` (docs/on-call.md). */
export const statusSchema = siteStateSchema.extend({
  history: z.array(tickSummarySchema()),
  explained: z.object({
    /** The tick explained (the latest stored one), or null before the first. */
    tick: z.object({ tick: z.number().int(), assessedAt: z.string(), assessmentKey: z.string() }).nullable(),
    /** The latest tick signal by signal (null before the first, or when its stored assessment cannot be read). */
    latest: tickExplanationSchema.nullable(),
    /** Why `latest` is null, in words. */
    unexplained: z.string().nullable(),
    /** What put the loop in its band: while it waits after a pause, the pausing tick's rule or score. */
    bandCause: bandCauseSchema,
    canaries: canaryStatusSchema,
    next: nextStepSchema,
    trend: trendSchema,
  }),
});
export type Status = z.output<typeof statusSchema>;
