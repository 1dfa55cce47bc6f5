/**
 * Refusal rates from the store's minute rollups (all routes), for a review (pure). A refusal is a hard
 * block, a challenge or a soft block — what the loop's refusal rules count.
 *
 * A one-minute rate is noise at a few requests a minute, so the peak is taken over a trailing window of
 * PEAK_WINDOW_MS (the loop's recent window), counted only with MIN_REQUESTS in it. Refusals "peaked"
 * when they first reached PEAK_SHARE of their highest rate: on a noisy plateau of 75–89 % the exact highest
 * minute is chance, the climb to it is not.
 */
import type { RateBucket } from '../../tools/charts/types';

export const PEAK_WINDOW_MS = 5 * 60_000;
export const MIN_REQUESTS = 20;
export const PEAK_SHARE = 0.8;

export interface RefusalPeak {
  /** Highest trailing refusal rate (0–1) in the range, and the first minute it was reached. */
  rate: number;
  at: number;
  /** The first minute the trailing rate reached PEAK_SHARE × rate: when refusals peaked. */
  reachedAt: number;
}

export interface RateSpan {
  requests: number;
  refusals: number;
  /** refusals / requests, null without requests. */
  rate: number | null;
  /** Requests per minute over the span. */
  perMinute: number;
}

const refused = (b: RateBucket): number => b.hardBlocks + b.challenges + b.softBlocks;

/** Requests and refusals of the buckets in [from, to). */
export function spanRate(buckets: readonly RateBucket[], from: number, to: number): RateSpan {
  let requests = 0;
  let refusals = 0;
  for (const b of buckets) {
    if (b.t < from || b.t >= to) continue;
    requests += b.requests;
    refusals += refused(b);
  }
  return {
    requests,
    refusals,
    rate: requests === 0 ? null : refusals / requests,
    perMinute: to > from ? requests / ((to - from) / 60_000) : 0,
  };
}

/**
 * The trailing refusal rate at the end of each bucket in [from, to): the buckets of the PEAK_WINDOW_MS
 * before it (itself included), null with fewer than MIN_REQUESTS.
 */
export function trailingRates(
  buckets: readonly RateBucket[],
  from: number,
  to: number,
  bucketMs: number,
): { t: number; rate: number | null }[] {
  const sorted = [...buckets].sort((a, b) => a.t - b.t);
  const out: { t: number; rate: number | null }[] = [];
  let lo = 0;
  let requests = 0;
  let refusals = 0;
  for (const [hi, b] of sorted.entries()) {
    requests += b.requests;
    refusals += refused(b);
    const end = b.t + bucketMs;
    while (lo < hi && sorted[lo]!.t < end - PEAK_WINDOW_MS) {
      requests -= sorted[lo]!.requests;
      refusals -= refused(sorted[lo]!);
      lo += 1;
    }
    if (b.t >= from && b.t < to) out.push({ t: b.t, rate: requests >= MIN_REQUESTS ? refusals / requests : null });
  }
  return out;
}

/** The refusal peak of [from, to), or null when no trailing window had enough requests. */
export function refusalPeak(
  buckets: readonly RateBucket[],
  from: number,
  to: number,
  bucketMs: number,
): RefusalPeak | null {
  const rates = trailingRates(buckets, from, to, bucketMs).filter(
    (r): r is { t: number; rate: number } => r.rate !== null,
  );
  if (rates.length === 0) return null;
  const top = rates.reduce((best, r) => (r.rate > best.rate ? r : best));
  const reached = rates.find((r) => r.rate >= PEAK_SHARE * top.rate)!;
  return { rate: top.rate, at: top.t, reachedAt: reached.t };
}
