/**
 * One tick of the control loop, as a pure function: the previous loop state and this tick's assessment
 * in, the next state, the controls to write (if any) and the notifications to send out. The workflow
 * runs activities for the side effects; everything decided lives here, where it is unit-tested and
 * replays identically.
 *
 * Three parts, in this order (docs/control-loop.md):
 *   band     band.ts   — controls per band, the owner's notices, the pause and its reminders;
 *   parser   parser.ts — parser health below its threshold notifies the parser's owner (no throttling);
 *   routes   routes.ts — route-specific failures notify the owner as a route alert.
 */
import { describeNoScore } from '../../scoring/learning';
import { HISTORY_LIMIT, type LoopState, type TickSummary, pushBounded } from '../loop-state';
import { buildEvidence } from '../notices';
import type { TickAssessment } from '../tick-assessment';
import { planBand, planWhileAwaiting } from './band';
import { planParserAlert } from './parser';
import { planRouteAlert } from './routes';
import { scoringStep } from '../scoring-step';
import type { LoopConfig, TickDraft, TickPlan } from './types';

export type { ControlChange, LoopConfig, TickPlan } from './types';

export function planTick(prev: LoopState, assessed: TickAssessment, config: LoopConfig): TickPlan {
  // Smoothing, bands and the canary floor: the step the assessment also stores with the tick's row
  // (core/control/scoring-step.ts), so the stored smoothed score and scored band are this summary's.
  const raw = assessed.assessment;
  const scored = scoringStep(prev.scoring, prev.lastAssessedAt, raw, assessed.assessedAt, config);
  const elapsed = scored.elapsedMs;
  const step = scored.tick;
  // From here on the reasons are the floored ones (a mismatch first), for state, notices and history.
  const a = { ...raw, reasons: scored.reasons };
  const t: TickAssessment = { ...assessed, assessment: a };
  const d: TickDraft = {
    prev,
    elapsedMs: elapsed,
    t,
    state: {
      ...prev,
      tick: t.tick,
      scoring: step.state,
      lastAssessedAt: t.assessedAt,
      lastAssessmentKey: t.assessmentKey,
      scoredBand: step.band,
      score: a.health.score,
      smoothedScore: step.smoothedScore,
      parserHealth: a.parser.score,
      reasons: [...a.reasons],
      firstAssessedAt: prev.firstAssessedAt ?? t.assessedAt,
      // An assessed tick ends an episode of failed ones.
      problem: null,
      // Descriptive only (the state query, status, details): learning the baseline vs too little traffic.
      noScore: describeNoScore(a, config.scoring),
      heldFor: null,
    },
    change: null,
    notices: [],
    actions: [],
  };
  // Decide first, word the notifications last: their evidence then includes this tick.
  if (prev.awaiting !== null) planWhileAwaiting(d, config);
  else planBand(d, step, config);
  planParserAlert(d, config);
  planRouteAlert(d, config);

  const state = d.state;
  const summary: TickSummary = {
    tick: t.tick,
    assessedAt: t.assessedAt,
    state: a.state,
    score: a.health.score,
    smoothedScore: step.smoothedScore,
    band: state.band,
    scoredBand: step.band,
    parserHealth: a.parser.score,
    reasons: [...a.reasons],
    routeVerdict: a.routes.verdict,
    actions: d.actions,
  };
  state.history = pushBounded(prev.history, summary, HISTORY_LIMIT);
  state.bandTicks = { ...prev.bandTicks, [state.band]: prev.bandTicks[state.band] + 1 };
  const evidence = d.notices.length > 0 ? buildEvidence(state, t) : null;
  return { state, change: d.change, notices: evidence === null ? [] : d.notices.map((n) => n(evidence)) };
}
