/**
 * Parser health: a second 0-100 score, owned by whoever maintains the parser. A redesign that breaks
 * extraction is a code fix, not a relationship problem, so it must not move the health score — and a
 * site serving challenge pages must not look like a parser bug. Both hold by construction: this module
 * reads only extraction outcomes (counted over responses that were not refused, see window.ts) and the
 * health score never reads them.
 *
 * Same shape as the health score: rate of each failure kind per extraction, only excess over the site's
 * baseline counts, capped, weighted, rounded like Python.
 */
import { DEFAULT_SCORING_CONFIG, type ParserConfig } from './config';
import { pythonRound } from './python-round';
import { type RateSignalExplanation, rateSignal } from './rate-signal';
import { EXTRACTION_SIGNALS, NO_SCORE, type ExtractionSignal } from './reasons';
import { leftFoldSum, rankReasons } from './signal-math';
import type { Window } from './window';

export type ExtractionCounts = Pick<
  Window,
  'extractionOk' | 'extractionMissingFields' | 'extractionSchemaMismatch' | 'extractionEmpty'
>;

export interface ParserHealthExplanation {
  minExtractions: number;
  minBaselineExtractions: number;
  extractions: { current: number; baseline: number };
  signals: Record<ExtractionSignal, RateSignalExplanation>;
  penaltyTotal: number;
  unrounded: number;
}

export interface ParserHealthResult {
  score: number | null;
  reasons: Array<ExtractionSignal | typeof NO_SCORE.notEnoughExtractions | typeof NO_SCORE.learning>;
  explanation: ParserHealthExplanation;
}

const FIELD = {
  extraction_missing_fields: 'extractionMissingFields',
  extraction_schema_mismatch: 'extractionSchemaMismatch',
  extraction_empty: 'extractionEmpty',
} as const satisfies Record<ExtractionSignal, keyof ExtractionCounts>;

const EMPTY: ExtractionCounts = {
  extractionOk: 0,
  extractionMissingFields: 0,
  extractionSchemaMismatch: 0,
  extractionEmpty: 0,
};

/** Every extraction attempt ends in exactly one outcome, so the outcomes add up to the attempts. */
export function extractionAttempts(w: ExtractionCounts): number {
  return w.extractionOk + w.extractionMissingFields + w.extractionSchemaMismatch + w.extractionEmpty;
}

/** `baseline` null (a new site) means learning: there is no normal to compare with. */
export function parserHealth(
  current: ExtractionCounts,
  baseline: ExtractionCounts | null,
  config: ParserConfig = DEFAULT_SCORING_CONFIG.parser,
): ParserHealthResult {
  const base = baseline ?? EMPTY;
  const n = extractionAttempts(current);
  const baseN = extractionAttempts(base);
  const signals = {} as Record<ExtractionSignal, RateSignalExplanation>;
  for (const key of EXTRACTION_SIGNALS) {
    signals[key] = rateSignal(
      { count: current[FIELD[key]], outOf: n },
      { count: base[FIELD[key]], outOf: baseN },
      config.weights[key],
      config.caps.rateExcess,
    );
  }
  const penalties = EXTRACTION_SIGNALS.map((k) => [k, signals[k].penalty] as const);
  const penaltyTotal = leftFoldSum(penalties.map(([, p]) => p));
  const unrounded = 100 - penaltyTotal;
  const explanation: ParserHealthExplanation = {
    minExtractions: config.minExtractions,
    minBaselineExtractions: config.minBaselineExtractions,
    extractions: { current: n, baseline: baseN },
    signals,
    penaltyTotal,
    unrounded,
  };
  if (baseline === null || baseN < config.minBaselineExtractions)
    return { score: null, reasons: [NO_SCORE.learning], explanation };
  if (n < config.minExtractions) return { score: null, reasons: [NO_SCORE.notEnoughExtractions], explanation };
  return { score: pythonRound(unrounded), reasons: rankReasons(penalties), explanation };
}
