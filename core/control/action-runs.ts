/**
 * A site's control changes told as actions (pure): consecutive changes by the same actor into the same band
 * are one run — twelve one-minute throttle steps read as one throttle from 16 to 3 — and each run is named by
 * what it did. The review's actions table (client/review/actions.ts) and the chart's marks
 * (tools/charts/mark-labels.ts) fold and name the same runs, so the two never tell an incident differently.
 */
import type { Controls } from './controls';

export const ACTION_KINDS = ['throttle', 'pause', 'restore', 'resume', 'stop', 'change'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/** What folding needs of a control change (an audit row as any reader holds it). */
export interface FoldableChange {
  actor: string;
  oldControls: Controls | null;
  newControls: Controls;
  /** The person's decision that made the change, or null for the loop's own. */
  decisionKey: string | null;
}

/**
 * What a run of changes did, from the controls before its first change and after its last (`byDecision`: a person's
 * decision made it).
 */
export function actionKind(before: Controls | null, after: Controls, byDecision: boolean): ActionKind {
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

/** Changes (in time order) folded into runs, each in time order; every change is in exactly one run. */
export function foldRuns<C extends FoldableChange>(changes: readonly C[]): C[][] {
  const runs: C[][] = [];
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
  return runs;
}
