/**
 * `target-health status <site>`: the loop's state (its `state` and `history` queries), explained — the
 * latest tick signal by signal against the site's normal (its stored assessment), routes, canaries, the
 * score's trend over a day, and what the loop will do next and why, with the commands to run
 * (docs/on-call.md).
 */
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { workflowUiLink } from '../../server/config/env';
import { readStatus } from '../on-call/read-status';
import { formatStatus } from '../on-call/status-text';
import { siteArgument } from '../site-arg';
import type { CliContext } from '../context';

export function registerStatusCommand(program: Command, context: () => CliContext): void {
  program
    .command('status')
    .description(
      "a site's band and scores explained: each signal vs its normal, routes, canaries, the day's trend, what " +
        'the loop does next and why',
    )
    .argument('<site>', 'the site (host name or URL)')
    .option('--history <n>', 'recent ticks to show', '10')
    .option('--json', 'print the state, history and explanation as JSON (docs/on-call.md)')
    .action(async (rawSite: string, options: { json?: boolean; history: string }) => {
      const site = siteArgument(rawSite);
      const n = Number(options.history);
      if (!Number.isInteger(n) || n < 0)
        throw new UserError(`--history: ${describeValue(options.history)} must be a whole number ≥ 0`);
      const ctx = context();
      const status = await readStatus({ client: await ctx.temporal(), pool: await ctx.db() }, site, n);
      if (status === null)
        throw new UserError(`site: no health loop for ${site}; start one with \`target-health start ${site}\``);
      const { state, history, explained } = status;
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ...state, history, explained })}\n`);
        return;
      }
      process.stdout.write(
        formatStatus({
          state,
          history,
          explained,
          link: workflowUiLink(ctx.uiUrl(), ctx.temporalSettings().namespace, workflowIdForSite(site)),
        }),
      );
    });
}
