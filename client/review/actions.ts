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
import type { ActionRow } from './schema';

/** Before and after an action: the loop's current window, long enough to hold the effect of a step. */
export const ACTION_SPAN_MS = 15 * 60_000;

export function groupActions(
  changes: readonly ControlChange[],
  buckets: readonly RateBucket[],
  spanMs = ACTION_SPAN_MS,
): ActionRow[] {
  return foldRuns(changes).map((run) => {
    const first = run[0]!;
    const last = run[run.length - 1]!;
    const start = first.at.getTime();
    const end = last.at.getTime();
    return {
      kind: actionKind(first.oldControls, last.newControls, last.decisionKey !== null),
      from: first.at.toISOString(),
      to: last.at.toISOString(),
      steps: run.length,
      actor: last.actor,
      change: describeChange(first.oldControls, last.newControls),
      reason: last.reason,
      before: spanRate(buckets, start - spanMs, start),
      // From the minute after the last change: the minute it was made in still had the old load.
      after: spanRate(
        buckets,
        Math.floor(end / 60_000) * 60_000 + 60_000,
        Math.floor(end / 60_000) * 60_000 + 60_000 + spanMs,
      ),
    };
  });
}
