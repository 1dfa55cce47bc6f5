/** `target-health start <site>`: register a site and start its control loop. */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Command } from 'commander';
import { TargetSite, HealthBand } from '../../common/search-attributes';
import { workflowIdForSite } from '../../common/names';
import { UserError } from '../../common/user-error';
import { workflowUiLink } from '../../config/env';
import { upsertSite } from '../../db/sites';
import { siteArgument } from '../site-arg';
import { siteHealthInputSchema, type SiteHealthInput } from '../../workflows/site-health-input';
import type { CliContext } from '../context';
import { parseDuration } from '../durations';

interface StartOptions {
  tick: string;
  owner?: string;
  parserOwner?: string;
}

export function registerStartCommand(program: Command, context: () => CliContext): void {
  program
    .command('start')
    .description("register a site and start its health loop (workflow site-health:<site>)")
    .argument('<site>', 'the site, as a host name (shop.example.com) or URL')
    .option('--tick <duration>', 'time between assessments, e.g. 30s, 1m', '60s')
    .option('--owner <contact>', "who is notified when the site degrades (the crawl's owner)")
    .option('--parser-owner <contact>', "who is notified when the site's parser health falls")
    .action(async (rawSite: string, options: StartOptions) => {
      const site = siteArgument(rawSite);
      const input: SiteHealthInput = { site, tickIntervalMs: parseDuration('--tick', options.tick) };
      const checked = siteHealthInputSchema.safeParse(input);
      if (!checked.success) throw new UserError(checked.error.issues.map((i) => i.message).join('; '));

      const ctx = context();
      await upsertSite(await ctx.db(), site, {
        ...(options.owner ? { owner: options.owner } : {}),
        ...(options.parserOwner ? { parserOwner: options.parserOwner } : {}),
      });
      const client = await ctx.temporal();
      const settings = ctx.temporalSettings();
      const workflowId = workflowIdForSite(site);
      const link = workflowUiLink(ctx.uiUrl(), settings.namespace, workflowId);
      try {
        await client.workflow.start('siteHealth', {
          workflowId,
          taskQueue: settings.taskQueue,
          args: [input],
          typedSearchAttributes: [
            { key: TargetSite, value: site },
            { key: HealthBand, value: 'learning' },
          ],
          staticSummary: `Health loop for ${site}`,
          staticDetails: `Scores how ${site} treats the crawler every ${options.tick}; throttles when degrading, pauses and waits for a person when resisting.`,
        });
        process.stdout.write(`started ${workflowId} (tick ${options.tick})\n${link}\n`);
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) {
          process.stdout.write(`${workflowId} is already running\n${link}\n`);
          return;
        }
        throw err;
      }
    });
}
