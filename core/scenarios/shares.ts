/**
 * When a kind of refusal passes half of the traffic, measured on the generated traffic itself (not on
 * the scenario's parameters): the first minute whose trailing five minutes (itself and the four before)
 * have more than half of their requests refused that way. Five minutes with too few requests say
 * nothing (a quiet night's three requests, one of them blocked, is no majority).
 */
import type { MinuteCounts } from './traffic';

export const SHARE_MINUTES = 5;
export const SHARE_MIN_REQUESTS = 20;

/** Index of the first such minute in `counts` (consecutive minutes), or null. */
export function firstMajorityMinute(
  counts: readonly MinuteCounts[],
  refused: (c: MinuteCounts) => number,
): number | null {
  let requests = 0;
  let hits = 0;
  for (let m = 0; m < counts.length; m++) {
    requests += counts[m]!.requests;
    hits += refused(counts[m]!);
    if (m >= SHARE_MINUTES) {
      requests -= counts[m - SHARE_MINUTES]!.requests;
      hits -= refused(counts[m - SHARE_MINUTES]!);
    }
    if (requests >= SHARE_MIN_REQUESTS && hits * 2 > requests) return m;
  }
  return null;
}

export const hardBlocksOf = (c: MinuteCounts): number => c.hardBlocks;
export const refusalsOf = (c: MinuteCounts): number => c.hardBlocks + c.challenges + c.softBlocks;
