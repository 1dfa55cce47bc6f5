/**
 * One tick's assessment of one site: everything the control loop needs from a current window and its
 * baseline, in one pure call (the workflow reaches it through an activity). Smoothing and bands carry
 * state across ticks and live in site-state.ts.
 */
import { type CanaryCheck, checkCanaries } from './canary';
import { DEFAULT_SCORING_CONFIG, type ScoringConfig } from './config';
import { type CostDriftResult, costDrift } from './cost-drift';
import { type HealthExplanation, healthScore } from './health-score';
import { type BaselineReadiness, baselineReadiness } from './learning';
import { type ParserHealthResult, parserHealth } from './parser-health';
import { type HealthSignal, NO_SCORE, type NoScoreReason, type ReasonKey } from './reasons';
import { type RouteDiagnosis, diagnoseRoutes, healthyRoutesWindow } from './route-diagnosis';
import { type MajorityRefusalResult, assessMajorityRefusal } from './majority-refusal';
import { type ConfirmedDiagnosis, type RouteWatch, confirmRoutes, withoutGroups } from './route-watch';
import { type TotalRefusalResult, assessTotalRefusal } from './total-refusal';
import { type HostilityWindow, type Window, type WindowInput, parseWindow } from './window';
import { bandFor, type ScoredBand } from './bands';

/**
 * `learning`: no usable baseline, so no health score. `insufficient-data`: a usable baseline, but too
 * little current traffic — the current window (after leaving out failing routes) is too small to judge;
 * the site is not learning, and the loop holds its band. `scored`: a health score exists.
 */
export type AssessmentState = 'learning' | 'insufficient-data' | 'scored';

export interface HealthAssessment {
  /** `healthy-routes` when route diagnosis left failing routes out of the score. */
  scope: 'site' | 'healthy-routes';
  /** The window actually scored. */
  window: HostilityWindow;
  score: number | null;
  reasons: Array<HealthSignal | NoScoreReason>;
  /** Null while learning (there is nothing to explain a comparison with). */
  explanation: HealthExplanation | null;
}

export interface Assessment {
  state: AssessmentState;
  baseline: BaselineReadiness;
  health: HealthAssessment;
  parser: ParserHealthResult;
  cost: CostDriftResult;
  /**
   * Route diagnosis after confirmation (route-watch.ts): route-specific only for confirmed routes, with
   * the ones still watched. Stored assessments made before confirmation existed have no `watching`.
   */
  routes: RouteDiagnosis & Partial<Pick<ConfirmedDiagnosis, 'watching' | 'newlyConfirmed'>>;
  totalRefusal: TotalRefusalResult;
  /** Absent from assessments stored before the rule existed. */
  majorityRefusal?: MajorityRefusalResult;
  /**
   * Routes still being confirmed whose traffic alone moves this tick's score into a worse band: the
   * score with them set aside too, and which routes. The loop then holds the band and the
   * smoothed score until the routes are confirmed (set aside) or cleared, so a dead proxy does not
   * throttle the site while its alert is being confirmed. Null when there is nothing to hold for;
   * absent from assessments stored before the rule existed.
   */
  routeHold?: RouteHold | null;
  /** What the next tick's `previous` is (absent from assessments stored before it existed). */
  carry?: AssessCarry;
  canary: CanaryCheck;
  /**
   * Every reason key raised this tick, hostility first (a site serving challenge pages breaks any
   * extractor): total_refusal or majority_refusal, health signals by penalty, canary_mismatch, route_specific,
   * extraction_*, cost_*.
   */
  reasons: ReasonKey[];
}

export interface AssessInput {
  current: WindowInput;
  /** The site's baseline window (previous 14 days excluding the last day), or null for a new site. */
  baseline: WindowInput | null;
  /** The previous tick's total-refusal streak (or flag); 0 / false on the first tick. */
  previousRefusal?: boolean | number;
  /** The rest of what the previous tick carried (majority-refusal streak, route watch); none on the first tick. */
  previous?: Partial<Omit<AssessCarry, 'refusalStreak'>>;
  /** The tick's time in ms (route confirmation measures how long a suspect lasted), or null. */
  at?: number | null;
}

export interface RouteHold {
  /** The seed score of the window without the confirmed routes and the ones being watched. */
  score: number;
  /** The band that score is in (plain thresholds), better than the tick's own score's. */
  band: ScoredBand;
  /** The watched routes, `pool dc-us`. */
  routes: string[];
}

/** What one tick's assessment hands to the next (kept in the loop state). */
export interface AssessCarry {
  refusalStreak: number;
  majorityStreak: number;
  routeWatch: RouteWatch;
}

const isSignal = (r: string): r is HealthSignal =>
  r === 'hard_block' || r === 'challenge' || r === 'soft_block' || r === 'latency';

/** Inputs are validated (throws WindowValidationError naming the field) and defaults filled. */
export function assess(input: AssessInput, config: ScoringConfig = DEFAULT_SCORING_CONFIG): Assessment {
  return assessValidated(
    {
      ...input,
      current: parseWindow(input.current, 'current'),
      baseline: input.baseline === null ? null : parseWindow(input.baseline, 'baseline'),
    },
    config,
  );
}

/** What `assess` scores once its windows are validated. */
export type ValidatedAssessInput = Omit<AssessInput, 'current' | 'baseline'> & {
  current: Window;
  baseline: Window | null;
};

/**
 * `assess` on windows validated already — `parseWindow`'s output, or windows summed from rows validated where
 * they were read (a replay's period read, server/db/signal-store/period-rows.ts) — scored as they are: a
 * replay scores thousands of ticks, and parsing each window again was a third of a tick's time.
 */
export function assessValidated(
  input: ValidatedAssessInput,
  config: ScoringConfig = DEFAULT_SCORING_CONFIG,
): Assessment {
  const { current, baseline } = input;

  // This tick's test, then confirmation: only a confirmed route is set aside from the score.
  const raw = diagnoseRoutes(current.routes, baseline?.routes ?? [], config.routes);
  const confirmed = confirmRoutes(
    raw,
    current.routes,
    current.recent,
    input.previous?.routeWatch ?? [],
    input.at ?? null,
    config.routes,
  );
  const routes = confirmed.diagnosis;
  const scoped = healthyRoutesWindow(current, routes);
  const scope = routes.verdict === 'route-specific' ? 'healthy-routes' : 'site';
  const readiness = baselineReadiness(baseline, config.learning);
  // The refusal rules set aside every route the test singles out, confirmed or not: a dead pool must not
  // pause the site while its alert is still being confirmed.
  const aside = [
    ...(raw.verdict === 'route-specific' ? raw.suspects : []),
    ...(routes.verdict === 'route-specific' ? routes.suspects : []),
  ];
  const refusalCurrent = withoutGroups(current, current.routes, aside);
  const refusalRecent =
    current.recent === undefined ? null : withoutGroups(current.recent, current.recent.routes, aside);

  let health: HealthAssessment;
  let state: AssessmentState;
  if (!readiness.ready || baseline === null) {
    state = 'learning';
    health = { scope, window: scoped, score: null, reasons: [NO_SCORE.learning], explanation: null };
  } else {
    const result = healthScore(scoped, baseline, config.health);
    state = result.score === null ? 'insufficient-data' : 'scored';
    health = { scope, window: scoped, score: result.score, reasons: result.reasons, explanation: result.explanation };
  }

  const routeHold =
    state === 'scored' && baseline !== null ? holdForWatchedRoutes(current, baseline, routes, health, config) : null;

  const parser = parserHealth(current, baseline, config.parser);
  const cost = costDrift(current, baseline, config.cost);
  const totalRefusal = assessTotalRefusal(
    refusalCurrent,
    input.previousRefusal ?? 0,
    config.totalRefusal,
    refusalRecent,
  );
  const majorityRefusal = assessMajorityRefusal(
    refusalCurrent,
    refusalRecent,
    readiness.ready ? baseline : null,
    input.previous?.majorityStreak ?? 0,
    config.majorityRefusal,
  );
  const canary = checkCanaries(current.canary, config.canary);

  const reasons: ReasonKey[] = [];
  if (totalRefusal.totalRefusal) reasons.push('total_refusal');
  else if (majorityRefusal.majorityRefusal) reasons.push('majority_refusal');
  reasons.push(...health.reasons.filter(isSignal));
  if (canary.mismatch) reasons.push('canary_mismatch');
  if (routes.verdict === 'route-specific') reasons.push('route_specific');
  for (const r of parser.reasons) if (r.startsWith('extraction_')) reasons.push(r as ReasonKey);
  reasons.push(...cost.reasons);

  const carry: AssessCarry = {
    refusalStreak: totalRefusal.streak,
    majorityStreak: majorityRefusal.streak,
    routeWatch: confirmed.watch,
  };
  return {
    state,
    baseline: readiness,
    health,
    parser,
    cost,
    routes,
    totalRefusal,
    majorityRefusal,
    routeHold,
    carry,
    canary,
    reasons,
  };
}

const BAND_RANK: Record<ScoredBand, number> = { healthy: 0, degrading: 1, resisting: 2 };

/**
 * Whether the routes being watched (suspects of this tick, not confirmed yet) are what pulls the score
 * into a worse band: the score of the window without them (and without the confirmed ones) is in a
 * better band than the tick's score. Latency stays the scored window's (a route's p95 is not removable).
 */
function holdForWatchedRoutes(
  current: Window,
  baseline: Window,
  routes: Assessment['routes'],
  health: HealthAssessment,
  config: ScoringConfig,
): RouteHold | null {
  const watching = routes.watching ?? [];
  if (watching.length === 0 || health.score === null) return null;
  const confirmed = routes.verdict === 'route-specific' ? routes.suspects : [];
  const counts = withoutGroups(current, current.routes, [...confirmed, ...watching]);
  const without = healthScore({ ...counts, p95LatencyMs: health.window.p95LatencyMs }, baseline, config.health);
  if (without.score === null) return null;
  const band = bandFor(without.score, config.bands);
  if (BAND_RANK[band] >= BAND_RANK[bandFor(health.score, config.bands)]) return null;
  return { score: without.score, band, routes: watching.map((w) => `${w.dimension} ${w.value}`) };
}
