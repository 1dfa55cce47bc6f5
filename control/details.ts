/**
 * The run's "current details" in the Temporal UI: a short markdown table of where the site stands, so a
 * person opening the run sees the band, the scores, the controls and whether it waits for them without
 * reading the event history.
 */
import type { LoopState } from './loop-state';

const dash = (v: number | null): string => (v === null ? '—' : String(v));

export function detailsMarkdown(site: string, state: LoopState, tickIntervalMs: number): string {
  const c = state.controls;
  const controls = c === null ? '—' : c.paused ? (c.canaryOnly ? 'paused, canaries only' : 'paused') : `concurrency ${c.concurrencyLimit}, revisit ×${c.revisitMultiplier}, cost ×${c.effectiveCostMultiplier}`;
  const waiting = state.awaiting === null ? 'no' : `**yes**, since ${state.awaiting.since} (${state.awaiting.kind}${state.awaiting.remindersSent > 0 ? `, ${state.awaiting.remindersSent} reminders` : ''})`;
  const decision = state.lastDecision === null ? '—' : `${state.lastDecision.kind} by ${state.lastDecision.who} at ${state.lastDecision.decidedAt}`;
  const rows: Array<[string, string]> = [
    ['band', `**${state.band}**${state.scoredBand !== state.band ? ` (score says ${state.scoredBand})` : ''}`],
    ['score / smoothed', `${dash(state.score)} / ${dash(state.smoothedScore)}${state.noScore === null ? '' : ` (${state.noScore.detail})`}${state.heldFor === null || state.heldFor === undefined ? '' : ` (${state.heldFor})`}`],
    ['parser health', dash(state.parserHealth)],
    ['reasons', state.reasons.length > 0 ? state.reasons.join(', ') : '—'],
    ['controls', controls],
    ['awaiting a human', waiting],
    ...(state.problem === null ? [] : ([['problem', `**${state.problem.kind}** since ${state.problem.since} (${state.problem.ticks} ticks): ${state.problem.message}`]] as Array<[string, string]>)),
    ['last decision', decision],
    ['tick', `${state.tick} (every ${Math.round(tickIntervalMs / 1000)} s), last at ${state.lastAssessedAt ?? '—'}`],
  ];
  // Pipes inside cells would break the table.
  const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [`**${site}**`, '', '| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${cell(v)} |`)].join('\n');
}
