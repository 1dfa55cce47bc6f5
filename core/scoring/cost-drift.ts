/**
 * Cost drift: what one valid record costs now compared with the site's normal, in retries, bytes and
 * credits. Every other signal eventually shows up here as money, and a cost-aware scheduler needs a
 * single number to move budget to sites where it still buys data.
 */
import { DEFAULT_SCORING_CONFIG, type CostConfig } from './config';
import { COST_SIGNALS, type CostSignal } from './reasons';
import type { Window } from './window';

export type CostCounts = Pick<Window, 'requests' | 'validRecords' | 'retries' | 'bytes' | 'credits'>;

export interface CostMetric {
  /** Per valid record now, and in the baseline (both divide by max(1, validRecords), like the seed's rates). */
  now: number;
  baseline: number;
  /** The baseline after the floor (the divisor actually used). */
  baselineFloored: number;
  /** now / baselineFloored. */
  ratio: number;
  /** Whether either window spent anything of this kind (a site without credits has no credit drift). */
  used: boolean;
}

export type CostDriftStatus = 'ok' | 'learning' | 'insufficient-data';

export interface CostDriftResult {
  status: CostDriftStatus;
  metrics: Record<CostSignal, CostMetric>;
  /** Metrics whose ratio reached `reasonRatio`, by ratio descending (ties in retries, bytes, credits order). */
  reasons: CostSignal[];
  /**
   * How much more a valid record costs than normal, in money: the larger of the bytes and credits ratios
   * among those in use (retries are already paid for in bytes and credits), never below 1. 1 when not ok.
   */
  costRatio: number;
}

const FIELD = { cost_retries: 'retries', cost_bytes: 'bytes', cost_credits: 'credits' } as const satisfies Record<
  CostSignal,
  keyof CostCounts
>;
const FLOOR = {
  cost_retries: 'retriesPerRecord',
  cost_bytes: 'bytesPerRecord',
  cost_credits: 'creditsPerRecord',
} as const satisfies Record<CostSignal, keyof CostConfig['floors']>;

const perRecord = (amount: number, records: number): number => amount / Math.max(1, records);

/**
 * now / floored, saturated at the largest double: credits may be any finite number and a floor any
 * positive one, so the quotient can overflow — and Infinity is no answer (JSON turns it into null on
 * its way to the workflow). A ratio that large is "far above normal" all the same.
 */
const ratioOf = (now: number, floored: number): number => Math.min(now / floored, Number.MAX_VALUE);

export function costDrift(
  current: CostCounts,
  baseline: CostCounts | null,
  config: CostConfig = DEFAULT_SCORING_CONFIG.cost,
): CostDriftResult {
  const base = baseline ?? { requests: 0, validRecords: 0, retries: 0, bytes: 0, credits: 0 };
  const metrics = {} as Record<CostSignal, CostMetric>;
  for (const key of COST_SIGNALS) {
    const now = perRecord(current[FIELD[key]], current.validRecords);
    const baselinePer = perRecord(base[FIELD[key]], base.validRecords);
    const floored = Math.max(baselinePer, config.floors[FLOOR[key]]);
    metrics[key] = {
      now,
      baseline: baselinePer,
      baselineFloored: floored,
      ratio: ratioOf(now, floored),
      used: current[FIELD[key]] > 0 || base[FIELD[key]] > 0,
    };
  }
  let status: CostDriftStatus = 'ok';
  if (baseline === null || base.validRecords < config.minBaselineValidRecords) status = 'learning';
  else if (current.requests < config.minRequests) status = 'insufficient-data';
  if (status !== 'ok') return { status, metrics, reasons: [], costRatio: 1 };

  const reasons = COST_SIGNALS.filter((k) => metrics[k].used && metrics[k].ratio >= config.reasonRatio).sort(
    (a, b) => metrics[b].ratio - metrics[a].ratio,
  );
  let costRatio = 1;
  for (const key of ['cost_bytes', 'cost_credits'] as const) {
    if (metrics[key].used) costRatio = Math.max(costRatio, metrics[key].ratio);
  }
  return { status, metrics, reasons, costRatio };
}

/**
 * The multiplier a cost-aware scheduler applies to this site's nominal cost: cost drift times a factor
 * for the (smoothed) health score, 100 / score, so a site at 50 costs twice as much per useful page as a
 * healthy one. Capped at `maxMultiplier`; a missing score adds nothing (no evidence either way). Never
 * below 1: the baseline is the price the scheduler already knows, this only adds the drift.
 */
export function effectiveCostMultiplier(
  costRatio: number,
  healthScore: number | null,
  config: CostConfig = DEFAULT_SCORING_CONFIG.cost,
): number {
  const scoreFactor = healthScore === null ? 1 : 100 / Math.max(healthScore, 100 / config.maxMultiplier);
  return Math.min(config.maxMultiplier, Math.max(1, costRatio * scoreFactor));
}
