/**
 * The actions of an incident (pure): the control changes of its window folded into runs — consecutive
 * changes by the same actor into the same band, so twelve one-minute throttle steps read as one
 * throttle from 16 to 3 — each with the refusal rate and traffic before its first change and after its
 * last, from the minute rollups. Whether refusals fell after a throttle is the question a review asks.
 */
import type { RateBucket } from '../../tools/charts/types';
import { type Controls, describeChange } from '../../core/control/controls';
import type { ControlChange } from '../../server/db/history';
import { spanRate } from './refusals';
import type { ActionRow } from './schema';

/** Before and after an action: the loop's current window, long enough to hold the effect of a step. */
export const ACTION_SPAN_MS = 15 * 60_000;

/**
 * What a run of changes did, from the controls before its first change and after its last (`byDecision`: a person's
 * decision made it).
 */
export function actionKind(before: Controls | null, after: Controls, byDecision: boolean): ActionRow['kind'] {
  if (after.band === 'stopped') return 'stop';
  if (before !== null && before.paused && !after.paused) return byDecision ? 'resume' : 'restore';
  if (after.paused && (before === null || !before.paused)) return 'pause';
  if (before === null) return 'change';
  if (
    after.concurrencyLimit < before.concurrencyLimit ||
    after.revisitMultiplier > before.revisitMultiplier ||
    after.effectiveCostMultiplier > before.effectiveCostMultiplier
  )
    return 'throttle';
  if (
    after.concurrencyLimit > before.concurrencyLimit ||
    after.revisitMultiplier < before.revisitMultiplier ||
    after.effectiveCostMultiplier < before.effectiveCostMultiplier
  )
    return 'restore';
  return 'change';
}

export function groupActions(
  changes: readonly ControlChange[],
  buckets: readonly RateBucket[],
  spanMs = ACTION_SPAN_MS,
): ActionRow[] {
  const runs: ControlChange[][] = [];
  for (const c of changes) {
    const run = runs[runs.length - 1];
    const last = run?.[run.length - 1];
    const sameRun =
      last !== undefined &&
      last.actor === c.actor &&
      last.newControls.band === c.newControls.band &&
      last.decisionKey === null &&
      c.decisionKey === null &&
      // A pause, a stop or a resume is its own action, never folded into the steps before it.
      last.newControls.paused === c.newControls.paused;
    if (sameRun) run!.push(c);
    else runs.push([c]);
  }
  return runs.map((run) => {
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
