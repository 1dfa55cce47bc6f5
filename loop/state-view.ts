/** What the `state` query answers, as a pure function of the loop's state and its inbox. */
import type { SiteHealthState, SiteHealthSummary } from './messages';
import type { LoopState } from '../core/control/loop-state';
import type { ParsedDecision } from '../core/control/decisions';
import type { TickAssessment } from '../core/control/tick-assessment';

export interface InboxView {
  rejected: string[];
  pending: number;
  /** Decisions received so far in this chain. */
  seq: number;
}

export function stateView(
  site: string,
  tickIntervalMs: number,
  state: LoopState,
  inbox: InboxView,
  lastAssessment: TickAssessment | null,
): SiteHealthState {
  return {
    site,
    chainId: state.chainId,
    runs: state.runs,
    tick: state.tick,
    tickIntervalMs,
    band: state.band,
    scoredBand: state.scoredBand,
    score: state.score,
    smoothedScore: state.smoothedScore,
    noScore: state.noScore,
    heldFor: state.heldFor,
    parserHealth: state.parserHealth,
    reasons: state.reasons,
    controls: state.controls,
    awaitingHuman: state.awaiting,
    lastDecision: state.lastDecision,
    routeDiagnosis: lastAssessment
      ? { verdict: lastAssessment.assessment.routes.verdict, summary: lastAssessment.assessment.routes.summary }
      : null,
    alerts: state.alerts,
    rejected: inbox.rejected,
    pendingDecisions: inbox.pending,
    lastAssessedAt: state.lastAssessedAt,
    lastAssessment,
    canaries: lastAssessment?.canaries ?? null,
    problem: state.problem,
  };
}

/** The workflow's result once a `stop` is applied. */
export function stopSummary(
  site: string,
  state: LoopState,
  stop: { decision: ParsedDecision; decidedAt: string },
  decisions: number,
): SiteHealthSummary {
  const previous = state.history[state.history.length - 1];
  return {
    site,
    outcome: 'stopped',
    stoppedBy: stop.decision.who,
    why: stop.decision.why,
    decidedAt: stop.decidedAt,
    ticks: state.tick,
    runs: state.runs,
    firstAssessedAt: state.firstAssessedAt,
    lastAssessedAt: state.lastAssessedAt,
    finalBand: previous?.band ?? 'learning',
    finalScore: state.score,
    finalSmoothedScore: state.smoothedScore,
    finalParserHealth: state.parserHealth,
    reasons: state.reasons,
    bandTicks: state.bandTicks,
    decisions,
    controls: state.controls,
  };
}
