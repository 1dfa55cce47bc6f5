/**
 * The actions of an incident (pure): the control changes of its window folded into runs
 * (core/control/action-runs.ts: consecutive changes by the same actor into the same band, so twelve one-minute
 * throttle steps read as one throttle from 16 to 3) — each with the refusal rate and traffic before its first
 * change and after its last, from the minute rollups. Whether refusals fell after a throttle is the question a
 * review asks.
 */
import type { RateBucket } from '../../tools/charts/types';
import { actionKind, foldRuns } from '../../core/control/action-runs';
import { describeChange } from '../../core/control/controls';
import type { ControlChange } from '../../server/db/history';
import { spanRate } from './refusals';
import type { ActionEffect, ActionRow, RateSpanJson } from './schema';

/** Before and after an action: the loop's current window, long enough to hold the effect of a step. */
export const ACTION_SPAN_MS = 15 * 60_000;

/** Traffic must fall by this share after a throttle, a pause or a stop to count as obeyed. */
export const OBEYED_DROP = 0.1;
/** Refusals moved when their share changed by at least this many points (0–1). */
export const REFUSALS_MOVED = 0.02;
/** Below this many requests a minute after a pause, what was sent is canaries and stragglers, not the crawl. */
export const CANARY_ONLY_PER_MINUTE = 5;

/**
 * Did the action help (pure): was it obeyed — after a throttle, a pause or a stop the crawler's requests per minute
 * must fall by OBEYED_DROP — and did refusals fall once it was. After a pause the few requests still sent (canaries)
 * are no sample of the crawl: a higher share of them refused is the wall still standing, not the pause making it
 * worse, and the verdict says so.
 */
export function actionEffect(
  kind: ActionRow['kind'],
  before: RateSpanJson,
  after: RateSpanJson,
  replayed = false,
): ActionEffect {
  const slows = kind === 'throttle' || kind === 'pause' || kind === 'stop';
  const rpm = `requests per minute ${before.perMinute.toFixed(1)} → ${after.perMinute.toFixed(1)}`;
  const refusals =
    before.rate === null || after.rate === null
      ? null
      : after.rate <= before.rate - REFUSALS_MOVED
        ? 'fell'
        : after.rate >= before.rate + REFUSALS_MOVED
          ? 'rose'
          : 'held';
  const pct = (r: number | null): string => (r === null ? '—' : `${(r * 100).toFixed(1)} %`);
  const refusalText =
    refusals === null ? 'refusals not measurable' : `refusals ${refusals} ${pct(before.rate)} → ${pct(after.rate)}`;
  if (replayed)
    // A replay's action reached no crawler: the traffic after it is what happened without it.
    return {
      obeyed: null,
      refusals,
      verdict:
        `replayed: no crawler received this ${kind}, so the traffic after it cannot say whether it would have ` +
        `been obeyed or helped (${rpm}; ${refusalText})`,
    };
  if (!slows) {
    const rose = after.perMinute > before.perMinute * (1 + OBEYED_DROP);
    return {
      obeyed: null,
      refusals,
      verdict: `traffic ${rose ? 'came back' : 'did not come back'} (${rpm}); ${refusalText}`,
    };
  }
  if (before.requests === 0) return { obeyed: null, refusals, verdict: `no traffic before it to compare (${rpm})` };
  const obeyed = after.perMinute <= before.perMinute * (1 - OBEYED_DROP);
  if (!obeyed)
    return {
      obeyed,
      refusals,
      verdict:
        `NOT OBEYED: ${rpm} — the crawler did not slow down after the ${kind}, so it could not help; ` +
        `${refusalText}`,
    };
  if (refusals === 'rose' && kind !== 'throttle' && after.perMinute < CANARY_ONLY_PER_MINUTE)
    return {
      obeyed,
      refusals,
      verdict:
        `obeyed (${rpm}); ${refusalText}, but only ${after.perMinute.toFixed(1)} requests a minute were sent after ` +
        `the ${kind} (canaries and stragglers): the wall still standing, not the ${kind} making it worse`,
    };
  const helped =
    refusals === 'fell' ? 'it helped' : refusals === 'rose' ? 'the site went on hardening' : 'refusals did not fall';
  return { obeyed, refusals, verdict: `obeyed (${rpm}); ${refusalText}: ${helped}` };
}

export function groupActions(
  changes: readonly ControlChange[],
  buckets: readonly RateBucket[],
  spanMs = ACTION_SPAN_MS,
  replayed = false,
): ActionRow[] {
  return foldRuns(changes).map((run) => {
    const first = run[0]!;
    const last = run[run.length - 1]!;
    const start = first.at.getTime();
    const end = last.at.getTime();
    const kind = actionKind(first.oldControls, last.newControls, last.decisionKey !== null);
    const before = spanRate(buckets, start - spanMs, start);
    // From the minute after the last change: the minute it was made in still had the old load.
    const next = Math.floor(end / 60_000) * 60_000 + 60_000;
    const after = spanRate(buckets, next, next + spanMs);
    return {
      kind,
      from: first.at.toISOString(),
      to: last.at.toISOString(),
      steps: run.length,
      actor: last.actor,
      change: describeChange(first.oldControls, last.newControls),
      reason: last.reason,
      before,
      after,
      effect: actionEffect(kind, before, after, replayed),
    };
  });
}
