/**
 * Had a tuning replay settled (pure)? A replay starts from the loop's initial state: the first score it folds in
 * becomes the smoothed score whole, and the refusal streaks start at zero. Started cold at an incident, the first
 * (already bad) score is the smoothed one at once, so a raised threshold "warns an hour earlier" where, replayed
 * from well before, it warns a minute earlier. The same happens after a long stretch without a score: the next
 * score is weighed by the whole gap (core/scoring/smoothing.ts), so it all but replaces the smoothed score.
 *
 * So a comparison of two replays is only read where both had folded in scores for SETTLE_HALF_LIVES of their own
 * half-life (under 2 % weight left on the cold start; the streaks' few ticks are long settled too) since their last
 * cold start: the first score, or a score after more than one half-life (and more than a tick) without one: it
 * weighs over half.
 */
import { formatDuration } from '../../core/common/durations';
import type { ReplayTick } from '../../tools/replay/types';
import { when } from './words';

export const SETTLE_HALF_LIVES = 6;

export const settleMs = (halfLifeMs: number): number => SETTLE_HALF_LIVES * halfLifeMs;

export interface Settling {
  /** The last cold start at or before the reading (epoch ms), null when no score came by then. */
  coldStartAt: number | null;
  /** The tick the comparison reads: the first scored tick at or after the reference (else the reference). */
  readAt: number;
  settled: boolean;
}

/**
 * Whether a run had settled when a comparison reads it at `ref` (epoch ms): the scored tick it reads there (the
 * first at or after `ref`) came SETTLE_HALF_LIVES half-lives or more after the run's last cold start.
 */
export function settling(
  ticks: readonly Pick<ReplayTick, 'asOf' | 'score'>[],
  halfLifeMs: number,
  ref: number,
  tickMs: number,
): Settling {
  const scored = ticks.filter((t) => t.score !== null).map((t) => Date.parse(t.asOf));
  const readAt = scored.find((t) => t >= ref) ?? ref;
  let coldStartAt: number | null = null;
  for (const [i, t] of scored.entries()) {
    if (t > readAt) break;
    // A missed score is a gap only past the tick: a half-life shorter than the tick weighs every score over half.
    if (i === 0 || t - scored[i - 1]! > Math.max(halfLifeMs, tickMs)) coldStartAt = t;
  }
  return { coldStartAt, readAt, settled: coldStartAt !== null && readAt - coldStartAt >= settleMs(halfLifeMs) };
}

/** Why a run that had not settled gives no comparison, in words (`what` names the reference: `the onset`). */
export function unsettledText(s: Settling, halfLifeMs: number, what: string, run: string): string {
  const halfLife = formatDuration(halfLifeMs);
  const need = `${formatDuration(settleMs(halfLifeMs))} (${SETTLE_HALF_LIVES} half-lives of ${halfLife})`;
  if (s.coldStartAt === null)
    return (
      `no comparison: the store has no traffic before ${when(new Date(s.readAt).toISOString())} to settle the ` +
      `smoothing (${run} needs ${need} of scores before ${what})`
    );
  const since = s.readAt - s.coldStartAt;
  return (
    `no comparison: the store has no traffic before ${when(new Date(s.coldStartAt).toISOString())} to settle the ` +
    `smoothing (${run}'s scores start there, ${since === 0 ? 'at' : `${formatDuration(since)} before`} ${what}; ` +
    `settling takes ${need})`
  );
}
