/**
 * One rate signal scored against its baseline, with the numbers a reader needs to trust it. Shared by
 * the health score (refusal rates per request) and parser health (failure rates per extraction).
 */
import { rateBadness, rateOf } from './signal-math';
import { type Interval, wilsonInterval } from './wilson';

export interface RateSignalExplanation {
  kind: 'rate';
  weight: number;
  /** Events in the current window, out of how many requests (or extractions). */
  count: number;
  outOf: number;
  /** Current rate: count / max(1, outOf). */
  now: number;
  /** Baseline rate, computed the same way. */
  baseline: number;
  /** now - baseline (negative when better than normal; only positive excess is penalised). */
  excess: number;
  /** Excess at which the full weight is lost (0.20 = 20 percentage points). */
  cap: number;
  badness: number;
  penalty: number;
  /** 95% Wilson intervals: how sure each rate is, given its volume. */
  interval: { now: Interval; baseline: Interval };
}

export function rateSignal(
  current: { count: number; outOf: number },
  baseline: { count: number; outOf: number },
  weight: number,
  cap: number,
): RateSignalExplanation {
  const now = rateOf(current.count, current.outOf);
  const base = rateOf(baseline.count, baseline.outOf);
  const badness = rateBadness(now, base, cap);
  return {
    kind: 'rate',
    weight,
    count: current.count,
    outOf: current.outOf,
    now,
    baseline: base,
    excess: now - base,
    cap,
    badness,
    penalty: weight * badness,
    interval: {
      now: wilsonInterval(current.count, current.outOf),
      baseline: wilsonInterval(baseline.count, baseline.outOf),
    },
  };
}
