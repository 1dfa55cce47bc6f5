/**
 * `target-health decide resume|stop|pause <site>`: a person's decision for a site's loop. Sent as an
 * update by default, so the answer comes back: the controls applied, or why the decision was refused
 * (validated in the workflow before it is accepted; a refused decision changes nothing). `--signal`
 * sends it fire-and-forget instead (what `temporal workflow signal --name resume` does).
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { workflowUiLink } from '../../server/config/env';
import { parseDecision } from '../../core/control/decisions';
import { type DecisionInputs, type DecisionKind, type DecisionResult, decisionMessages } from '../../loop/messages';
import type { CliContext } from '../context';
import { executeUpdateRetrying } from '../../server/temporal/update-retry';
import { siteArgument } from '../site-arg';
import { shellQuote } from '../../stack/cli-settings';

interface DecideOptions {
  who?: string;
  why?: string;
  mode?: string;
  concurrency?: string;
  revisit?: string;
  signal?: boolean;
  json?: boolean;
}

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n))
    throw new UserError(`${name}: ${describeValue(value)} is not a number`);
  return n;
}

/** The payload exactly as the workflow receives it (same shape as `temporal workflow signal --input`). */
export function decisionPayload(kind: DecisionKind, o: DecideOptions): Record<string, unknown> {
  const payload: Record<string, unknown> = { who: o.who, why: o.why };
  if (kind === 'resume') {
    if (o.mode !== undefined) payload.mode = o.mode;
    const concurrency = numberOption('--concurrency', o.concurrency);
    const revisit = numberOption('--revisit', o.revisit);
    if (concurrency !== undefined) payload.concurrency = concurrency;
    if (revisit !== undefined) payload.revisitMultiplier = revisit;
  }
  return payload;
}

/** The workflow's messages name payload fields; on the command line, name the flags instead. */
const FLAGS: Record<string, string> = {
  who: '--who',
  why: '--why',
  mode: '--mode',
  concurrency: '--concurrency',
  revisitMultiplier: '--revisit',
};
export function asFlags(message: string): string {
  return message.replace(
    /(^\w+: |; )(who|why|mode|concurrency|revisitMultiplier):/g,
    (_m, lead: string, field: string) => `${lead}${FLAGS[field]}:`,
  );
}

/**
 * The `target-health decide` command that sends this payload, each value quoted for a POSIX shell: what the
 * console shows a person as the equivalent of the decision they are about to confirm.
 */
export function decideCommandLine(
  kind: DecisionKind,
  site: string,
  payload: Readonly<Record<string, string | number>>,
): string {
  const words = ['target-health', 'decide', kind, site];
  for (const [field, flag] of Object.entries(FLAGS))
    if (payload[field] !== undefined) words.push(flag, shellQuote(String(payload[field])));
  return words.map((w, i) => (i < 4 ? shellQuote(w) : w)).join(' ');
}

function describe(r: DecisionResult): string {
  const c = r.controls;
  const controls =
    c === null
      ? 'no controls'
      : c.paused
        ? c.band === 'stopped'
          ? 'stopped'
          : 'paused, canaries only'
        : `concurrency ${c.concurrencyLimit}, revisit ×${c.revisitMultiplier}`;
  return `${r.message} at ${r.decidedAt}: band ${r.band}, ${controls} (decision ${r.decisionKey})`;
}

async function decide<K extends DecisionKind>(
  kind: K,
  rawSite: string,
  options: DecideOptions,
  context: () => CliContext,
): Promise<void> {
  const site = siteArgument(rawSite);
  const payload = decisionPayload(kind, options);
  // The workflow validates too; checking here first gives the same one-line message without a round trip.
  const checked = parseDecision(kind, payload);
  if (!checked.ok) throw new UserError(asFlags(checked.message));
  // Checked above with the workflow's own schema: this is a valid payload of this kind.
  const input = payload as unknown as DecisionInputs[K];
  const messages = decisionMessages[kind];
  const ctx = context();
  const client = await ctx.temporal();
  const workflowId = workflowIdForSite(site);
  const handle = client.workflow.getHandle(workflowId);
  const link = workflowUiLink(ctx.uiUrl(), ctx.temporalSettings().namespace, workflowId);
  try {
    if (options.signal) {
      await handle.signal(messages.signal, input);
      process.stdout.write(
        `${kind} sent to ${workflowId} as a signal (check \`target-health status ${site}\`)\n${link}\n`,
      );
      return;
    }
    const result = await executeUpdateRetrying(handle, messages.update, [input]);
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${describe(result)}\n${link}\n`);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new UserError(`site: no running health loop for ${site}; start one with \`target-health start ${site}\``);
    if (err instanceof WorkflowUpdateFailedError) throw new UserError(err.cause?.message ?? err.message);
    throw err;
  }
}

export function registerDecideCommand(program: Command, context: () => CliContext): void {
  const cmd = program
    .command('decide')
    .description("a person's decision for a paused (or running) site: resume, stop or pause");
  const common = (c: Command): Command =>
    c
      .argument('<site>', 'the site (host name or URL)')
      .option('--who <who>', 'who decides (goes into the audit trail), e.g. alice@example.com')
      .option('--why <why>', 'why, in a sentence')
      .option('--signal', 'send as a signal (no answer) instead of an update')
      .option('--json', 'print the answer as JSON');
  common(
    cmd.command('resume').description('resume a site waiting for a decision: cautious (default) or explicit controls'),
  )
    .option('--mode <mode>', 'cautious (degrading-band controls) or explicit (needs --concurrency and --revisit)')
    .option('--concurrency <n>', 'explicit concurrency limit')
    .option('--revisit <x>', 'explicit revisit-interval multiplier (1 = as usual)')
    .action((site: string, o: DecideOptions) => decide('resume', site, o, context));
  common(cmd.command('stop').description('stop the site: controls say stopped, the loop ends with a summary')).action(
    (site: string, o: DecideOptions) => decide('stop', site, o, context),
  );
  common(cmd.command('pause').description('pause the site by hand: canaries only, waiting for resume or stop')).action(
    (site: string, o: DecideOptions) => decide('pause', site, o, context),
  );
}
