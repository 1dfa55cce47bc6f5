/**
 * Starting a site's loop: the workflow `site-health:<site>` with its first search attributes and the
 * static summary and details the Temporal UI shows. Shared by `target-health start` and the API's
 * `POST /v1/sites/{site}/loop`, so both start the same loop from the same validated input.
 */
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { workflowIdForSite } from '../../core/common/names';
import type { ParsedSiteHealthInput, SiteHealthInput } from '../../core/control/config';
import { SITE_HEALTH_WORKFLOW, type SiteHealthWorkflow } from '../../loop/messages';
import { attributesForNewRun } from '../../loop/attributes';
import { formatDuration } from '../../core/common/durations';

/** The run's static details in the Temporal UI: how this loop was configured. */
export function staticDetails(c: ParsedSiteHealthInput): string {
  const p = c.policy;
  const b = c.scoring.bands;
  return [
    `Scores how **${c.site}** treats the crawler every ${formatDuration(c.tickIntervalMs)} against its own normal ` +
      `(baseline ${formatDuration(c.window.baselineMs)}, current window ${formatDuration(c.window.currentWindowMs)}).`,
    '',
    '| band | score | action |',
    '|---|---|---|',
    `| healthy | ≥ ${b.healthyMin} | none; after a degradation restore +${p.concurrency.increaseStep} ` +
      `concurrency every ${formatDuration(p.steps.restoreEveryMs)} up to ${p.concurrency.nominal} |`,
    `| degrading | ${b.degradingMin}–${b.healthyMin - 1} | concurrency ×${p.concurrency.decreaseFactor} every ` +
      `${formatDuration(p.steps.degradeEveryMs)} (floor ${p.concurrency.floor}), ` +
      `revisit ×${p.revisit.increaseFactor} ` +
      `(max ×${p.revisit.max}), cost raised, owner notified |`,
    `| resisting | < ${b.degradingMin}, or a refusal rule (total or majority refusal) whatever the score | pause, ` +
      `canaries only, notify the owner, **wait for a person** (reminders every ` +
      `${formatDuration(p.reminderIntervalMs)}) |`,
    '',
    `Smoothing half-life ${formatDuration(c.scoring.smoothing.halfLifeMs)}, hysteresis ${b.hysteresis} points. ` +
      `Parser health below ${p.parserAlertBelow} for ${formatDuration(p.parserAlertAfterMs)} alerts the parser ` +
      `owner. ` +
      `Decide with \`target-health decide resume|stop|pause ${c.site}\`.`,
  ].join('\n');
}

/**
 * Starts the loop of `input.site` (validated beforehand as `checked`); `started` is false when a loop
 * of that site is already running (the workflow id is reused only after the previous run closed).
 */
export async function startSiteLoop(
  client: Client,
  taskQueue: string,
  input: SiteHealthInput,
  checked: ParsedSiteHealthInput,
  tickLabel: string,
): Promise<{ workflowId: string; started: boolean; runId: string | null }> {
  const workflowId = workflowIdForSite(checked.site);
  try {
    const handle = await client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
      workflowId,
      taskQueue,
      args: [input],
      typedSearchAttributes: attributesForNewRun(checked.site, {
        band: 'learning',
        awaiting: null,
        smoothedScore: null,
        parserHealth: null,
        problem: null,
      }),
      // Fixed at start (a run's summary cannot change): it points at the current details, which lead with
      // the band, why, and the command to decide.
      staticSummary:
        `Health loop for ${checked.site} (tick ${tickLabel}): band, why and how to decide under Current ` + `details`,
      staticDetails: staticDetails(checked),
    });
    return { workflowId, started: true, runId: handle.firstExecutionRunId };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { workflowId, started: false, runId: null };
    throw err;
  }
}
