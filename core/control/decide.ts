/**
 * What a human decision does to the loop, as pure functions: the controls it sets (before the action
 * activity writes them) and the loop state after it (once the activity returned the decision's
 * database time).
 *
 *   resume  controls per the mode (cautious = degrading-band controls; explicit = the person's numbers),
 *           the loop goes on in the degrading band and judges the site afresh: smoothing restarts and
 *           only traffic from the decision on counts (the evidence that paused it has been judged);
 *   pause   an operator pauses the site by hand: paused, canaries only, waiting for a decision;
 *   stop    the site is marked stopped and the workflow completes with a summary.
 */
import { INITIAL_SMOOTHED_SCORE } from '../scoring/smoothing';
import {
  type ActionPolicy,
  type Controls,
  cautiousControls,
  describeChange,
  explicitControls,
  nominalControls,
  pausedControls,
  stoppedControls,
} from './controls';
import type { ParsedDecision } from './decisions';
import type { DecisionSummary, LoopState } from './loop-state';
import { type NoticeDraft, buildEvidence } from './notices';

export interface DecisionMeta {
  decisionKey: string;
  via: 'signal' | 'update';
}

/** The assessment a decision is stored with: the one that paused the site, else the latest. */
export function decisionAssessmentKey(state: LoopState): string | null {
  return state.awaiting?.assessmentKey ?? state.lastAssessmentKey;
}

/**
 * The controls a decision sets, from the loop's band and controls alone: the console's preview of a decision
 * (client/console/decide-plan.ts) computes with this same function what the loop will apply.
 */
export function decisionControls(
  state: Pick<LoopState, 'controls' | 'band'>,
  d: ParsedDecision,
  policy: ActionPolicy,
): Controls {
  const current = state.controls ?? nominalControls(policy, state.band, 'no controls yet');
  switch (d.kind) {
    case 'resume': {
      const reason = `resumed by ${d.who} (${d.mode.mode}): ${d.why}`;
      return d.mode.mode === 'cautious'
        ? cautiousControls(current, policy, reason)
        : explicitControls(current, d.mode, reason);
    }
    case 'pause':
      return pausedControls(current, current.band, `paused by ${d.who}: ${d.why}`);
    case 'stop':
      return stoppedControls(current, `stopped by ${d.who}: ${d.why}`);
  }
}

export function decisionNotice(site: string, state: LoopState, d: ParsedDecision, next: Controls): NoticeDraft {
  const evidence = { ...buildEvidence(state, null), controls: next };
  const change = describeChange(state.controls, next);
  switch (d.kind) {
    case 'resume':
      return {
        kind: 'resumed',
        severity: 'info',
        audience: 'owner',
        title: `${site} resumed by ${d.who} (${d.mode.mode})`,
        text: `${d.why}. Controls: ${change}. The loop goes on from the degrading band.`,
        evidence,
      };
    case 'pause':
      return {
        kind: 'paused',
        severity: 'warning',
        audience: 'owner',
        title: `${site} paused by ${d.who}`,
        text: `${d.why}. Canaries only until someone sends resume or stop.`,
        evidence,
      };
    case 'stop':
      return {
        kind: 'stopped',
        severity: 'info',
        audience: 'owner',
        title: `${site} stopped by ${d.who}`,
        text: `${d.why}. The health loop has ended; controls say stopped.`,
        evidence,
      };
  }
}

/** The loop state once the decision is stored (decidedAt: its database time). */
export function afterDecision(
  state: LoopState,
  d: ParsedDecision,
  next: Controls,
  meta: DecisionMeta & { decidedAt: string },
): LoopState {
  const lastDecision: DecisionSummary = {
    decisionKey: meta.decisionKey,
    kind: d.kind,
    who: d.who,
    why: d.why,
    mode: d.kind === 'resume' ? d.mode : null,
    via: meta.via,
    decidedAt: meta.decidedAt,
    assessmentKey: decisionAssessmentKey(state),
  };
  const base = { ...state, controls: next, lastDecision };
  switch (d.kind) {
    case 'resume':
      return {
        ...base,
        awaiting: null,
        band: 'degrading',
        scoredBand: 'degrading',
        smoothedScore: null,
        // Smoothing and the refusal streaks start afresh: only traffic after the decision is judged. A
        // route under watch or confirmed stays so (a dead proxy pool is not the site's doing).
        scoring: {
          smoothed: { ...INITIAL_SMOOTHED_SCORE },
          band: 'degrading',
          refusalStreak: 0,
          ...(state.scoring.routeWatch === undefined
            ? {}
            : { majorityStreak: 0, routeWatch: state.scoring.routeWatch }),
        },
        evidenceSince: meta.decidedAt,
      };
    case 'pause':
      return {
        ...base,
        awaiting: {
          kind: 'manual',
          since: meta.decidedAt,
          reason: `paused by ${d.who}: ${d.why}`,
          pausedBy: d.who,
          assessmentKey: state.lastAssessmentKey,
          remindersSent: 0,
          lastNotifiedAt: meta.decidedAt,
        },
      };
    case 'stop':
      return { ...base, awaiting: null, band: 'stopped' };
  }
}
