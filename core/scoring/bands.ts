/**
 * Bands on the smoothed score, with hysteresis. Healthy 80-100, degrading 50-79, resisting below 50,
 * judged on the rounded smoothed score (the number operators see). To *leave* a band the score must be
 * past the boundary by `hysteresis` points (default 3): healthy becomes degrading at 76, degrading
 * becomes healthy again at 83; degrading becomes resisting at 46, resisting becomes degrading at 53.
 * So a score hovering around 80 (or 50) does not flap the band, and with it the site's concurrency.
 */
import type { HealthBand } from '../common/names';
import { DEFAULT_SCORING_CONFIG, type BandConfig } from './config';

export type { HealthBand } from '../common/names';
export type ScoredBand = Extract<HealthBand, 'healthy' | 'degrading' | 'resisting'>;

const RANK: Record<ScoredBand, number> = { healthy: 0, degrading: 1, resisting: 2 };

function bandWith(score: number, healthyMin: number, degradingMin: number): ScoredBand {
  if (score >= healthyMin) return 'healthy';
  if (score >= degradingMin) return 'degrading';
  return 'resisting';
}

/** The band of a score with no history (plain thresholds). */
export function bandFor(score: number, config: BandConfig = DEFAULT_SCORING_CONFIG.bands): ScoredBand {
  return bandWith(score, config.healthyMin, config.degradingMin);
}

function isScoredBand(band: HealthBand | null | undefined): band is ScoredBand {
  return band === 'healthy' || band === 'degrading' || band === 'resisting';
}

/**
 * The band after this score given the previous band. From `learning`, `stopped` or nothing, plain
 * thresholds apply; otherwise the band moves only when the score is `hysteresis` points past a boundary
 * in the direction of the move (it may move two bands at once if it is past both).
 */
export function nextBand(
  previous: HealthBand | null | undefined,
  score: number,
  config: BandConfig = DEFAULT_SCORING_CONFIG.bands,
): ScoredBand {
  if (!isScoredBand(previous)) return bandFor(score, config);
  const m = config.hysteresis;
  const worse = bandWith(score, config.healthyMin - m, config.degradingMin - m);
  if (RANK[worse] > RANK[previous]) return worse;
  const better = bandWith(score, config.healthyMin + m, config.degradingMin + m);
  if (RANK[better] < RANK[previous]) return better;
  return previous;
}
