/** `target-health status <site>`: the loop's current state, from the workflow's query. */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../common/names';
import { UserError } from '../../common/user-error';
import { siteArgument } from '../site-arg';
import type { SiteHealthState } from '../../workflows';
import type { CliContext } from '../context';

export function registerStatusCommand(program: Command, context: () => CliContext): void {
  program
    .command('status')
    .description("show a site's current band, score and last assessment")
    .argument('<site>', 'the site (host name or URL)')
    .option('--json', 'print the state as JSON')
    .action(async (rawSite: string, options: { json?: boolean }) => {
      const site = siteArgument(rawSite);
      const client = await context().temporal();
      const workflowId = workflowIdForSite(site);
      let state: SiteHealthState;
      try {
        state = await client.workflow.getHandle(workflowId).query<SiteHealthState>('state');
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw new UserError(`site: no health loop for ${site}; start one with \`target-health start ${site}\``);
        throw err;
      }
      if (options.json) {
        process.stdout.write(`${JSON.stringify(state)}\n`);
        return;
      }
      const a = state.lastAssessment;
      process.stdout.write(
        [`site      ${state.site}`, `band      ${state.band}`, `tick      ${state.tick} (every ${state.tickIntervalMs / 1000}s)`, `assessed  ${a ? a.assessedAt : 'not yet'}`].join('\n') + '\n',
      );
    });
}
