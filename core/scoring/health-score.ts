/**
 * The health (hostility) score: the seed's reference algorithm, bit for bit, plus an explanation.
 * Only excess over the site's own baseline counts; each signal is capped at its weight; fewer than
 * `minRequests` requests give no score at all (an absent score is more honest than a confident wrong one).
 */
import { DEFAULT_SCORING_CONFIG, type HealthConfig } from './config';
import { pythonRound } from './python-round';
import { HEALTH_SIGNALS, NO_SCORE, type HealthSignal } from './reasons';
import { type RateSignalExplanation, rateSignal } from './rate-signal';
import { LATENCY_BASELINE_FLOOR_MS, latencyBadness, leftFoldSum, rankReasons } from './signal-math';
import type { HostilityWindow } from './window';

export type { RateSignalExplanation } from './rate-signal';

export interface LatencySignalExplanation {
  kind: 'latency';
  weight: number;
  /** Current p95 in ms. */
  now: number;
  /** Baseline p95 in ms, and the same floored at 1 ms (the divisor actually used). */
  baseline: number;
  baselineFloored: number;
  /** now / baselineFloored. */
  ratio: number;
  /** ratio - 1: how far above normal (0.5 = 50% slower). */
  excess: number;
  /** Ratio at which the full weight is lost (3 = three times normal). */
  cap: number;
  badness: number;
  penalty: number;
}

export interface HealthExplanation {
  minRequests: number;
  requests: { current: number; baseline: number };
  signals: {
    hard_block: RateSignalExplanation;
    challenge: RateSignalExplanation;
    soft_block: RateSignalExplanation;
    latency: LatencySignalExplanation;
  };
  /** Sum of penalties (in weight order) and 100 minus it, before rounding. */
  penaltyTotal: number;
  unrounded: number;
}

export interface HealthScoreResult {
  /** 0-100, or null when the current window is too small to judge. */
  score: number | null;
  /** Reason keys by penalty (descending), or the seed's "not enough requests to judge". */
  reasons: Array<HealthSignal | typeof NO_SCORE.notEnoughRequests>;
  explanation: HealthExplanation;
}

const COUNT_FIELD = { hard_block: 'hardBlocks', challenge: 'challenges', soft_block: 'softBlocks' } as const;

function refusalSignal(
  signal: 'hard_block' | 'challenge' | 'soft_block',
  current: HostilityWindow,
  baseline: HostilityWindow,
  config: HealthConfig,
): RateSignalExplanation {
  const field = COUNT_FIELD[signal];
  return rateSignal(
    { count: current[field], outOf: current.requests },
    { count: baseline[field], outOf: baseline.requests },
    config.weights[signal],
    config.caps.rateExcess,
  );
}

function latencySignal(
  current: HostilityWindow,
  baseline: HostilityWindow,
  config: HealthConfig,
): LatencySignalExplanation {
  const weight = config.weights.latency;
  const floored = Math.max(baseline.p95LatencyMs, LATENCY_BASELINE_FLOOR_MS);
  const ratio = current.p95LatencyMs / floored;
  const badness = latencyBadness(current.p95LatencyMs, baseline.p95LatencyMs, config.caps.latencyMultiple);
  return {
    kind: 'latency',
    weight,
    now: current.p95LatencyMs,
    baseline: baseline.p95LatencyMs,
    baselineFloored: floored,
    ratio,
    excess: ratio - 1,
    cap: config.caps.latencyMultiple,
    badness,
    penalty: weight * badness,
  };
}

/**
 * Scores `current` against `baseline`. Pass a validated HealthConfig (see parseScoringConfig); the
 * default is the seed's. The explanation is filled in even when the score is absent, for the reader.
 */
export function healthScore(
  current: HostilityWindow,
  baseline: HostilityWindow,
  config: HealthConfig = DEFAULT_SCORING_CONFIG.health,
): HealthScoreResult {
  const signals = {
    hard_block: refusalSignal('hard_block', current, baseline, config),
    challenge: refusalSignal('challenge', current, baseline, config),
    soft_block: refusalSignal('soft_block', current, baseline, config),
    latency: latencySignal(current, baseline, config),
  };
  const penalties = HEALTH_SIGNALS.map((k) => [k, signals[k].penalty] as const);
  const penaltyTotal = leftFoldSum(penalties.map(([, p]) => p));
  const unrounded = 100 - penaltyTotal;
  const explanation: HealthExplanation = {
    minRequests: config.minRequests,
    requests: { current: current.requests, baseline: baseline.requests },
    signals,
    penaltyTotal,
    unrounded,
  };
  if (current.requests < config.minRequests) {
    return { score: null, reasons: [NO_SCORE.notEnoughRequests], explanation };
  }
  return { score: pythonRound(unrounded), reasons: rankReasons(penalties), explanation };
}
