/**
 * The per-tick assessment activity: read the site's current and baseline windows from the signal
 * store, score them (core/scoring/assess.ts: health score, parser health, cost drift, route diagnosis, total
 * refusal), and record the result once in the `assessments` history, keyed by site, workflow chain and
 * tick. A retry (the worker died, the reply got lost) finds the row and returns it unchanged — so a
 * tick is assessed exactly once, at one database time, however often the activity runs.
 */
import { assessmentKey } from '../core/control/keys';
import { recordAssessmentOnce, findAssessment } from '../server/db/assessments';
import type { Pool } from '../server/db/pool';
import { readSiteWindows } from '../server/db/signal-store';
import type { SiteWindows, WindowSpec } from '../server/db/signal-store/types';
import { findSite } from '../server/db/sites';
import type { Logger } from '../server/logging/logger';
import { type AssessInput, assess, assessValidated } from '../core/scoring/assess';
import type { ScoringConfig } from '../core/scoring/config';
import type { RunDueCanariesInput, RunDueCanariesResult } from './canaries';
import { canaryFailedDays, ownCanaryFetches } from '../server/db/canaries';
import { crawlerCanaries } from '../core/canaries/types';
import { windowBounds } from '../server/db/signal-store';
import type { TickAssessment } from '../core/control/tick-assessment';
import type { SiteHealthConfig } from '../core/control/config';
import { type ScoringCarry, scoringStep, tickScoring } from '../core/control/scoring-step';
import type { CanaryPolicy } from '../core/canaries/band-floor';

export type { TickAssessment } from '../core/control/tick-assessment';

export interface AssessSiteInput {
  site: string;
  workflowId: string;
  /** First run id of the workflow chain: stable across continue-as-new, so keys stay unique. */
  chainId: string;
  tick: number;
  window: SiteHealthConfig['window'];
  scoring: ScoringConfig;
  /** The previous tick's total-refusal streak. */
  previousRefusal: number;
  /** The rest of what the previous tick carried: majority-refusal streak and route watch (absent from older loops). */
  previous?: AssessInput['previous'];
  /** After a resume, only traffic from the decision on is judged (ISO time), else null. */
  evidenceSince: string | null;
  /** The tick's time (ISO), from the workflow's schedule: the windows end at the last whole minute before it. */
  asOf: string;
  /**
   * The previous tick's smoothing, band and time, so the row stores the tick's smoothed score and scored
   * band (core/control/scoring-step.ts). Optional: a regular-activity task scheduled by the release
   * before has none, and its tick is stored without them.
   */
  scoringFrom?: ScoringCarry;
  /** The planner's canary policy when the loop has one of its own (default: core/canaries/band-floor.ts). */
  canary?: CanaryPolicy;
}

/** The stored row's `result`: everything but the key, tick and time (columns of their own). */
type StoredResult = Omit<TickAssessment, 'assessmentKey' | 'tick' | 'assessedAt'>;

export type ReadWindows = (
  pool: Pool,
  site: string,
  spec: WindowSpec & { excludeDays?: readonly string[] },
) => Promise<SiteWindows>;

export interface AssessSiteDeps {
  pool: Pool;
  logger: Logger;
  /** The signal store's read (tests may wrap it to observe or delay a tick). */
  readWindows?: ReadWindows;
  /** Runs the site's due canaries (activities/canaries.ts); absent: no canaries. */
  runDueCanaries?: (input: RunDueCanariesInput) => Promise<RunDueCanariesResult>;
}

/** What one tick's assessment needs besides the database: the same for the live loop and a replay. */
export interface AssessAtInput {
  site: string;
  /** The tick's time: the windows end at the last whole minute before it. */
  asOf: Date;
  window: SiteHealthConfig['window'];
  scoring: ScoringConfig;
  previousRefusal: number;
  previous?: AssessInput['previous'];
  evidenceSince: string | null;
  /** The previous tick's smoothing (see AssessSiteInput): given, the result carries the tick's `scoring`. */
  scoringFrom?: ScoringCarry | undefined;
  canary?: CanaryPolicy | undefined;
}

/**
 * One tick's assessment at `asOf`, written nowhere: the windows read from the rollups, the due canaries
 * (live only: a replay passes no runner and judges the canary traffic recorded in the store), scored.
 * The live activity records its result; `target-health replay` calls exactly this for every simulated tick.
 */
export interface AssessAtDeps {
  pool: Pool;
  readWindows?: ReadWindows | undefined;
  runDueCanaries?: AssessSiteDeps['runDueCanaries'];
  /** The site's registration (default: read it); a replay reads it once. */
  findSite?: typeof findSite;
  /** Days whose canaries failed, left out of the baseline (default: read them); a replay reads them per baseline. */
  canaryFailedDays?: typeof canaryFailedDays;
  /** The product's own canary fetches in a span (default: read them). */
  ownCanaryFetches?: typeof ownCanaryFetches;
  /**
   * The windows `readWindows` returns were validated where they were read, so they are scored without being
   * parsed again (core/scoring/assess.ts `assessValidated`): a replay's, summed from its checked period read.
   * Unset (live), the assessment parses its windows as any input.
   */
  windowsValidated?: boolean;
}

export async function assessAt(deps: AssessAtDeps, input: AssessAtInput): Promise<StoredResult> {
  const readWindows = deps.readWindows ?? readSiteWindows;
  const readSite = deps.findSite ?? findSite;
  const failedDays = deps.canaryFailedDays ?? canaryFailedDays;
  const ownFetches = deps.ownCanaryFetches ?? ownCanaryFetches;
  const { asOf } = input;
  const spec: WindowSpec = {
    asOf,
    currentWindowMs: input.window.currentWindowMs,
    recentWindowMs: input.window.recentWindowMs,
    // The human gate: after a resume, only whole minutes from the decision on are judged.
    notBefore: input.evidenceSince === null ? null : new Date(input.evidenceSince),
    baselineMs: input.window.baselineMs,
    excludeRecentMs: input.window.excludeRecentMs,
  };
  // Canaries first, on every tick whatever the band (also while paused: then they are the traffic
  // the loop keeps judging). Idempotent per schedule slot, so a retried tick fetches nothing twice.
  const ran = deps.runDueCanaries ? await deps.runDueCanaries({ site: input.site, asOf: asOf.toISOString() }) : null;
  const canaries =
    ran && ran.canaries > 0 ? { window: ran.window, evidence: ran.evidence, nextDueAt: ran.nextDueAt } : null;
  // Baseline trust: days on which canaries failed are left out of the baseline (docs/canaries.md).
  const bounds = windowBounds(spec);
  const excludeDays = await failedDays(deps.pool, input.site, bounds.baseline.from, bounds.baseline.to);
  const [windows, site] = await Promise.all([
    readWindows(deps.pool, input.site, { ...spec, excludeDays }),
    readSite(deps.pool, input.site),
  ]);
  // The crawlers' own canaries: the store's canary traffic of the current window less the product's.
  const own = await ownFetches(deps.pool, input.site, windows.bounds.current.from, windows.bounds.current.to);
  // The canary block comes from the canary runs themselves (mismatches are not visible in traffic).
  const current = canaries ? { ...windows.current, canary: canaries.window } : windows.current;
  const scoreInput = {
    current,
    baseline: windows.baseline,
    previousRefusal: input.previousRefusal,
    previous: input.previous ?? {},
    at: asOf.getTime(),
  };
  // A canary run's window comes from outside the read: then the windows are parsed, validated or not.
  const assessment =
    deps.windowsValidated === true && canaries === null
      ? assessValidated(scoreInput, input.scoring)
      : assess(scoreInput, input.scoring);
  // The planner's own step on the same inputs (its time is `asOf`, the row's `assessedAt`), stored with the row.
  const from = input.scoringFrom;
  const scoring =
    from === undefined
      ? undefined
      : tickScoring(
          scoringStep(from, from.lastAssessedAt, assessment, asOf.toISOString(), {
            scoring: input.scoring,
            canary: input.canary,
          }),
        );
  return {
    site: { registered: site !== undefined, owner: site?.owner ?? null, parserOwner: site?.parserOwner ?? null },
    window: {
      currentFrom: windows.bounds.current.from.toISOString(),
      currentTo: windows.bounds.current.to.toISOString(),
      baselineFrom: windows.bounds.baseline.from.toISOString(),
      baselineTo: windows.bounds.baseline.to.toISOString(),
    },
    assessment,
    canaries: canaries ? { ...canaries, excludedBaselineDays: excludeDays } : null,
    crawlerCanaries: crawlerCanaries(windows.current.canary, own),
    ...(scoring === undefined ? {} : { scoring }),
  };
}

export function makeAssessSite(deps: AssessSiteDeps) {
  return async function assessSite(input: AssessSiteInput): Promise<TickAssessment> {
    const key = assessmentKey(input.site, input.chainId, input.tick);
    const existing = await findAssessment<StoredResult>(deps.pool, key);
    if (existing) {
      deps.logger.info(
        { site: input.site, tick: input.tick, assessmentKey: key },
        'assessment already recorded (activity retried): returning it',
      );
      return {
        assessmentKey: key,
        tick: input.tick,
        assessedAt: existing.assessedAt.toISOString(),
        ...existing.result,
      };
    }
    // The tick's time comes from the workflow (its schedule), so a late or retried activity judges
    // the same windows, and a replay at the same times reproduces it.
    const asOf = new Date(input.asOf);
    const result = await assessAt(deps, {
      site: input.site,
      asOf,
      window: input.window,
      scoring: input.scoring,
      previousRefusal: input.previousRefusal,
      previous: input.previous ?? {},
      evidenceSince: input.evidenceSince,
      scoringFrom: input.scoringFrom,
      canary: input.canary,
    });
    // Written once; if a concurrent attempt got there first, its row wins and is returned.
    const stored = await recordAssessmentOnce(deps.pool, {
      assessmentKey: key,
      site: input.site,
      workflowId: input.workflowId,
      chainId: input.chainId,
      tick: input.tick,
      assessedAt: asOf,
      result,
    });
    deps.logger.debug(
      {
        site: input.site,
        tick: input.tick,
        score: result.assessment.health.score,
        state: result.assessment.state,
        inserted: stored.inserted,
      },
      'assessed site',
    );
    return { assessmentKey: key, tick: input.tick, assessedAt: stored.assessedAt.toISOString(), ...stored.result };
  };
}
