/** Assessments built with the real scoring engine, for the control loop's pure tests. */
import { type ScoringConfig, parseScoringConfig } from '../../core/scoring/config';
import { type AssessInput, assess } from '../../core/scoring/assess';
import type { LoopState } from '../../core/control/loop-state';
import type { RouteWindow, WindowInput } from '../../core/scoring/window';
import { actionPolicySchema, type ActionPolicy } from '../../core/control/controls';
import type { TickAssessment } from '../../core/control/tick-assessment';
import type { LoopConfig } from '../../core/control/plan';

export const SITE = 'shop.example.com';

export const BASELINE: WindowInput = {
  requests: 20_000,
  hardBlocks: 100,
  challenges: 100,
  softBlocks: 0,
  p95LatencyMs: 300,
  extractionOk: 19_000,
  extractionMissingFields: 100,
  validRecords: 19_000,
  bytes: 2_000_000_000,
  routes: [
    { pool: 'a', requests: 10_000, hardBlocks: 50, challenges: 50, softBlocks: 0 },
    { pool: 'b', requests: 10_000, hardBlocks: 50, challenges: 50, softBlocks: 0 },
  ],
};

/** A current window of `requests` with the given refusal shares; extraction as usual unless told. */
export function window(
  requests: number,
  shares: { hard?: number; challenge?: number; soft?: number; missing?: number } = {},
  routes?: RouteWindow[],
): WindowInput {
  const hardBlocks = Math.round(requests * (shares.hard ?? 0));
  const challenges = Math.round(requests * (shares.challenge ?? 0));
  const softBlocks = Math.round(requests * (shares.soft ?? 0));
  const served = requests - hardBlocks - challenges - softBlocks;
  const missing = Math.round(served * (shares.missing ?? 0));
  const half = Math.floor(requests / 2);
  return {
    requests,
    hardBlocks,
    challenges,
    softBlocks,
    p95LatencyMs: 300,
    extractionOk: served - missing,
    extractionMissingFields: missing,
    validRecords: served - missing,
    bytes: requests * 100_000,
    routes: routes ?? [
      {
        pool: 'a',
        requests: half,
        hardBlocks: Math.floor(hardBlocks / 2),
        challenges: Math.floor(challenges / 2),
        softBlocks: Math.floor(softBlocks / 2),
      },
      {
        pool: 'b',
        requests: requests - half,
        hardBlocks: hardBlocks - Math.floor(hardBlocks / 2),
        challenges: challenges - Math.floor(challenges / 2),
        softBlocks: softBlocks - Math.floor(softBlocks / 2),
      },
    ],
  };
}

/** Short smoothing half-life: one tick (a minute apart) moves the smoothed score almost all the way. */
export const SCORING: ScoringConfig = parseScoringConfig({ smoothing: { halfLifeMs: 5_000 } });
export const POLICY: ActionPolicy = actionPolicySchema().parse({ reminderIntervalMs: 3 * 60_000 });
/** The planner's settings, ticks a minute apart (the tick fixtures' spacing). */
export const CONFIG: LoopConfig = {
  site: SITE,
  policy: POLICY,
  scoring: SCORING,
  tickIntervalMs: 60_000,
};

const T0 = Date.parse('2025-03-14T10:00:00.000Z');

export interface TickOptions {
  previousRefusal?: number;
  /** What the previous tick carried (majority-refusal streak, route watch): `carried(state)`. */
  previous?: AssessInput['previous'];
  baseline?: WindowInput | null;
}

/** What a loop state hands to the next assessment (as the workflow sends it). */
export function carried(state: LoopState): TickOptions {
  return {
    previousRefusal: state.scoring.refusalStreak,
    previous: { majorityStreak: state.scoring.majorityStreak ?? 0, routeWatch: state.scoring.routeWatch ?? [] },
  };
}

export function tickAssessment(tick: number, current: WindowInput, opts: TickOptions = {}): TickAssessment {
  return tickAssessmentAt(tick, tick * 60_000, current, opts);
}

/** A tick `atMs` after the fixtures' start (any tick interval). */
export function tickAssessmentAt(
  tick: number,
  atMs: number,
  current: WindowInput,
  opts: TickOptions = {},
): TickAssessment {
  const assessedAt = new Date(T0 + atMs).toISOString();
  return {
    assessmentKey: `${SITE}/chain/${tick}`,
    tick,
    assessedAt,
    site: { registered: true, owner: 'crawl@example.com', parserOwner: 'parser@example.com' },
    window: { currentFrom: assessedAt, currentTo: assessedAt, baselineFrom: assessedAt, baselineTo: assessedAt },
    assessment: assess(
      {
        current,
        baseline: opts.baseline === undefined ? BASELINE : opts.baseline,
        previousRefusal: opts.previousRefusal ?? 0,
        previous: opts.previous ?? {},
        at: T0 + atMs,
      },
      SCORING,
    ),
    canaries: null,
  };
}
