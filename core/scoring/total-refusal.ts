/**
 * Total refusal (a product rule on top of the seed). Each signal is capped, so a site answering every
 * request with 403 scores 65 and would only ever be "degrading". At least `threshold` (90%) of a
 * window's requests refused, on `consecutiveTicks` (2) ticks in a row with enough volume, therefore
 * counts as resisting whatever the score says, with its own reason `total_refusal`. The score itself
 * is untouched. With a recent window (the last 5 whole minutes), either window refusing counts.
 */
import { DEFAULT_SCORING_CONFIG, type TotalRefusalConfig } from './config';
import type { RefusalCounts } from './window';

export interface TotalRefusalResult {
  /** Refused share of this window: (hard + challenge + soft) / requests (0 with no requests). */
  refusedShare: number;
  /** Refused share of the recent window, when one was given with enough requests to judge; else null. */
  recentRefusedShare: number | null;
  /**
   * Which window made this tick refusing: `current` when the whole window did (it is then the one
   * shown, even if the recent one refused too), `recent` when only the last few minutes did, null when
   * the tick is not refusing. What a person is shown as "the rate that fired" (client/on-call/explain.ts).
   */
  refusingWindow: 'current' | 'recent' | null;
  /** Whether this window had enough requests to judge. */
  enoughVolume: boolean;
  /** This window alone refuses (enough volume and refusedShare >= threshold). */
  refusing: boolean;
  /** Refusing ticks in a row, including this one. Carry it to the next tick. */
  streak: number;
  /** The rule fires: enabled and streak >= consecutiveTicks. */
  totalRefusal: boolean;
}

/**
 * `previous` is the previous tick's state: its `totalRefusal`/`refusing` flag (true counts as a streak
 * of 1) or its streak. A tick without enough volume neither extends nor breaks the streak: low volume
 * is no evidence either way, and a refusing site often gets little traffic once throttled.
 */
export function assessTotalRefusal(
  window: RefusalCounts,
  previous: boolean | number,
  config: TotalRefusalConfig = DEFAULT_SCORING_CONFIG.totalRefusal,
  recent: RefusalCounts | null = null,
): TotalRefusalResult {
  const previousStreak = typeof previous === 'boolean' ? (previous ? 1 : 0) : Math.max(0, Math.floor(previous));
  const refused = window.hardBlocks + window.challenges + window.softBlocks;
  const refusedShare = window.requests === 0 ? 0 : refused / window.requests;
  const windowCounts = window.requests > 0 && window.requests >= config.minRequests;
  // The recent window (the last few minutes), when given, counts too: an abrupt wall is seen sooner.
  const recentCounts = recent !== null && recent.requests > 0 && recent.requests >= config.minRequests;
  const recentRefusedShare = recentCounts
    ? (recent.hardBlocks + recent.challenges + recent.softBlocks) / recent.requests
    : null;
  const recentRefusing = recentRefusedShare !== null && recentRefusedShare >= config.threshold;
  const currentRefusing = windowCounts && refusedShare >= config.threshold;
  const enoughVolume = windowCounts || recentCounts;
  const refusing = currentRefusing || recentRefusing;
  const refusingWindow = currentRefusing ? 'current' : recentRefusing ? 'recent' : null;
  const streak = !enoughVolume ? previousStreak : refusing ? previousStreak + 1 : 0;
  return {
    refusedShare,
    recentRefusedShare,
    refusingWindow,
    enoughVolume,
    refusing,
    streak,
    totalRefusal: config.enabled && streak >= config.consecutiveTicks,
  };
}
