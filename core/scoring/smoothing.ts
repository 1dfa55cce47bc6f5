/**
 * Exponential smoothing of the score over time, so one bad minute does not fire an alert while a
 * sustained drop is still noticed within the hour. Time-aware: the weight of the new score is
 * alpha = 1 - 2^(-dt / halfLife), so ticks may be irregular and the same half-life means the same
 * thing at any tick rate. Time comes in as elapsed milliseconds (deterministic, workflow-safe).
 */
import { DEFAULT_SCORING_CONFIG, type SmoothingConfig } from './config';

export interface SmoothedScore {
  /** The smoothed score (unrounded), or null before the first score. */
  value: number | null;
  /**
   * Time elapsed since the last score was folded in. Ticks without a score (too few requests) keep the
   * value and add their time here, so the next score is weighted by the true time since the last one.
   */
  pendingMs: number;
}

export const INITIAL_SMOOTHED_SCORE: SmoothedScore = Object.freeze({ value: null, pendingMs: 0 });

/** Weight of a new observation after `elapsedMs`: 1 - 2^(-elapsed / halfLife). */
export function smoothingAlpha(elapsedMs: number, halfLifeMs: number): number {
  return 1 - Math.pow(2, -elapsedMs / halfLifeMs);
}

export function smoothScore(
  previous: SmoothedScore,
  score: number | null,
  elapsedMs: number,
  config: SmoothingConfig = DEFAULT_SCORING_CONFIG.smoothing,
): SmoothedScore {
  if (!Number.isFinite(elapsedMs) || elapsedMs < 0)
    throw new RangeError(`elapsedMs must be a non-negative number (got ${elapsedMs})`);
  if (score === null) return { value: previous.value, pendingMs: previous.pendingMs + elapsedMs };
  if (previous.value === null) return { value: score, pendingMs: 0 };
  const alpha = smoothingAlpha(previous.pendingMs + elapsedMs, config.halfLifeMs);
  return { value: previous.value + alpha * (score - previous.value), pendingMs: 0 };
}
