/**
 * The scoring engine: pure, deterministic, importable from Temporal workflow code (no Node builtins, no
 * I/O, no clock, no randomness — time comes in as elapsed milliseconds). See docs/scoring.md.
 */
export * from './reasons';
export * from './window';
export * from './config';
export { pythonRound } from './python-round';
export { type Interval, Z_95, wilsonInterval } from './wilson';
export { LATENCY_BASELINE_FLOOR_MS, REASON_MIN_PENALTY } from './signal-math';
export type { RateSignalExplanation } from './rate-signal';
export {
  type HealthExplanation,
  type HealthScoreResult,
  type LatencySignalExplanation,
  healthScore,
} from './health-score';
export {
  type ExtractionCounts,
  type ParserHealthExplanation,
  type ParserHealthResult,
  extractionAttempts,
  parserHealth,
} from './parser-health';
export {
  type CostCounts,
  type CostDriftResult,
  type CostDriftStatus,
  type CostMetric,
  costDrift,
  effectiveCostMultiplier,
} from './cost-drift';
export { fisherExactGreater, hypergeometricUpperTail } from './fisher-exact';
export {
  MAX_LISTED_ROUTES,
  MAX_SUSPECTS,
  type RouteDiagnosis,
  type RouteDimension,
  type RouteFinding,
  type RouteGroupStats,
  type RouteVerdict,
  diagnoseRoutes,
  healthyRoutesWindow,
  routeKey,
} from './route-diagnosis';
export { type BaselineReadiness, baselineReadiness, describeNoScore } from './learning';
export { INITIAL_SMOOTHED_SCORE, type SmoothedScore, smoothScore, smoothingAlpha } from './smoothing';
export { type HealthBand, type ScoredBand, bandFor, nextBand } from './bands';
export { type TotalRefusalResult, assessTotalRefusal } from './total-refusal';
export { type CanaryCheck, checkCanaries } from './canary';
export { type AssessInput, type Assessment, type AssessmentState, type HealthAssessment, assess } from './assess';
export { INITIAL_SITE_STATE, type SiteScoringState, type SiteTick, advanceSiteState } from './site-state';
