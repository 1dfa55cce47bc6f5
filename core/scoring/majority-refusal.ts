/**
 * Majority refusal (a product rule beside the seed's score, which stays untouched). Each hostility
 * signal is capped — hard blocks at 35 points, challenges and soft blocks at 25 each — so a site that
 * refuses 97 % of requests with 403s still scores ~64, and an 80 % wave of challenges and soft blocks
 * ~50: never `resisting` on the score alone. Total refusal (≥ 90 %) covers only the extreme.
 *
 * The rule: when at least `threshold` (half) of the requests are refused by the site (hard blocks +
 * challenges + soft blocks, after route attribution has set the suspect routes aside) and that share is
 * at least `normalMultiple` (4×) the site's normal share (its baseline's), on `consecutiveTicks` (2)
 * ticks in a row, the site is resisting, with the reason `majority_refusal`. A tick counts as refusing
 * if either the current window (15 min) or the recent window (the last 5 whole minutes, so an abrupt
 * wall is seen within minutes) meets it with enough volume. A tick where neither window has the volume
 * neither extends nor breaks the streak (a refusing site often gets little traffic once throttled).
 *
 * Why these numbers: half the traffic refused is the point where "success below 40-50 %" alerts fire in
 * practice and where the crawl does more harm than good; 4× normal keeps a site that always challenges
 * a third of requests from being paused for being itself. Without a baseline there is no normal to
 * compare with, so a learning site is left to total refusal. docs/scoring.md, "Majority refusal".
 */
import { DEFAULT_SCORING_CONFIG, type MajorityRefusalConfig } from './config';
import type { RefusalCounts } from './window';

export interface MajorityRefusalResult {
  /** The site's normal refused share (its baseline's), or null without a usable baseline. */
  normalShare: number | null;
  /** Refused share of the current window (after setting suspect routes aside). */
  currentShare: number;
  /** Refused share of the recent window, or null when it was not read. */
  recentShare: number | null;
  /** Which window met the rule this tick (the recent one first), or null. */
  refusingWindow: 'recent' | 'current' | null;
  /** Whether either window had the volume to judge. */
  enoughVolume: boolean;
  /** Refusing ticks in a row, including this one. Carry it to the next tick. */
  streak: number;
  /** The rule fires: enabled, a baseline, and streak >= consecutiveTicks. */
  majorityRefusal: boolean;
}

const share = (c: RefusalCounts): number =>
  c.requests === 0 ? 0 : Math.min(1, (c.hardBlocks + c.challenges + c.softBlocks) / c.requests);

export function assessMajorityRefusal(
  current: RefusalCounts,
  recent: RefusalCounts | null,
  baseline: RefusalCounts | null,
  previousStreak: number,
  config: MajorityRefusalConfig = DEFAULT_SCORING_CONFIG.majorityRefusal,
): MajorityRefusalResult {
  const normalShare = baseline === null || baseline.requests === 0 ? null : share(baseline);
  const bar = normalShare === null ? Infinity : Math.max(config.threshold, config.normalMultiple * normalShare);
  const currentShare = share(current);
  const recentShare = recent === null ? null : share(recent);
  const currentCounts = current.requests > 0 && current.requests >= config.minRequests;
  const recentCounts = recent !== null && recent.requests > 0 && recent.requests >= config.minRecentRequests;
  const refusingWindow =
    recentCounts && recentShare! >= bar ? 'recent' : currentCounts && currentShare >= bar ? 'current' : null;
  const enoughVolume = currentCounts || recentCounts;
  const previous = Math.max(0, Math.floor(previousStreak));
  const streak = !enoughVolume ? previous : refusingWindow !== null ? previous + 1 : 0;
  return {
    normalShare,
    currentShare,
    recentShare,
    refusingWindow,
    enoughVolume,
    streak,
    majorityRefusal: config.enabled && normalShare !== null && streak >= config.consecutiveTicks,
  };
}
