/** `target-health status <site>`: the loop's current state, from the workflow's query. */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../common/names';
import { UserError } from '../../common/user-error';
import { describeValue } from '../../common/zod-issues';
import { workflowUiLink } from '../../config/env';
import { siteArgument } from '../site-arg';
import { type SiteHealthState, type TickSummary, historyQuery, stateQuery } from '../../control/messages';
import type { CliContext } from '../context';

const dash = (v: number | null): string => (v === null ? '—' : String(v));

export function formatStatus(state: SiteHealthState, history: readonly TickSummary[], link: string): string {
  const c = state.controls;
  const w = state.awaitingHuman;
  const d = state.lastDecision;
  const lines = [
    `site       ${state.site}`,
    `band       ${state.band}${state.scoredBand !== state.band ? ` (the score alone says ${state.scoredBand})` : ''}`,
    `score      ${dash(state.score)} (smoothed ${dash(state.smoothedScore)}), parser health ${dash(state.parserHealth)}`,
    ...(state.noScore === null || state.noScore === undefined ? [] : [`no score   ${state.noScore.detail}`]),
    ...(state.heldFor === null || state.heldFor === undefined ? [] : [`held       ${state.heldFor}`]),
    `reasons    ${state.reasons.length > 0 ? state.reasons.join(', ') : '—'}`,
    `routes     ${state.routeDiagnosis ? state.routeDiagnosis.summary : '—'}`,
    `controls   ${c === null ? '—' : `${c.paused ? (c.canaryOnly ? 'PAUSED (canaries only)' : 'PAUSED') : 'running'}, concurrency ${c.concurrencyLimit}, revisit ×${c.revisitMultiplier}, cost ×${c.effectiveCostMultiplier}`}`,
    `waiting    ${w === null ? 'no' : `YES since ${w.since} (${w.kind}: ${w.reason}); ${w.remindersSent} reminder(s)`}`,
    `decision   ${d === null ? '—' : `${d.kind} by ${d.who} at ${d.decidedAt}: ${d.why}`}`,
    `tick       ${state.tick} (every ${state.tickIntervalMs / 1000}s, run ${state.runs} of the chain), last ${state.lastAssessedAt ?? 'not yet'}`,
  ];
  if (state.rejected.length > 0) lines.push(`refused    ${state.rejected[state.rejected.length - 1]}`);
  if (history.length > 0) {
    lines.push('', 'recent ticks (score / smoothed, band, reasons, actions):');
    for (const t of history) lines.push(`  ${String(t.tick).padStart(5)}  ${dash(t.score).padStart(3)} / ${dash(t.smoothedScore).padStart(3)}  ${t.band.padEnd(9)}  ${t.reasons.join(',') || '—'}  ${t.actions.join('; ')}`);
  }
  lines.push('', link);
  return lines.join('\n') + '\n';
}

export function registerStatusCommand(program: Command, context: () => CliContext): void {
  program
    .command('status')
    .description("show a site's band, scores, controls, whether it waits for a person, and its recent ticks")
    .argument('<site>', 'the site (host name or URL)')
    .option('--history <n>', 'recent ticks to show', '10')
    .option('--json', 'print the state (and history) as JSON')
    .action(async (rawSite: string, options: { json?: boolean; history: string }) => {
      const site = siteArgument(rawSite);
      const n = Number(options.history);
      if (!Number.isInteger(n) || n < 0) throw new UserError(`--history: ${describeValue(options.history)} must be a whole number ≥ 0`);
      const ctx = context();
      const client = await ctx.temporal();
      const workflowId = workflowIdForSite(site);
      let state: SiteHealthState;
      let history: TickSummary[] = [];
      try {
        const handle = client.workflow.getHandle(workflowId);
        state = await handle.query(stateQuery);
        if (n > 0) history = await handle.query(historyQuery, n);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw new UserError(`site: no health loop for ${site}; start one with \`target-health start ${site}\``);
        throw err;
      }
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ...state, history })}\n`);
        return;
      }
      process.stdout.write(formatStatus(state, history, workflowUiLink(ctx.uiUrl(), ctx.temporalSettings().namespace, workflowId)));
    });
}
