/** `target-health start <site>`: register a site and start its control loop. */
import type { Command } from 'commander';
import { workflowIdForSite } from '../../common/names';
import { UserError } from '../../common/user-error';
import { workflowUiLink } from '../../config/env';
import { readSettingsFile } from '../../config/settings-file';
import { upsertSite } from '../../db/sites';
import { listCanaries } from '../../db/canaries';
import { noCanaryWarning } from '../on-call/canary-hint';
import { siteArgument } from '../site-arg';
import { parseSiteHealthInput, type ParsedSiteHealthInput, type SiteHealthInput } from '../../control/config';
import { startSiteLoop } from '../start-loop';
import type { CliContext } from '../context';
import { parseDuration } from '../durations';

export { staticDetails } from '../start-loop';

export interface StartOptions {
  tick: string;
  owner?: string;
  parserOwner?: string;
  config?: string;
}

/** Settings from `--config <file.json>`: any of window, scoring, policy, timeouts, maxTicksPerRun. */
function readConfigFile(path: string | undefined): Partial<SiteHealthInput> {
  return path === undefined ? {} : (readSettingsFile(path));
}

/**
 * The loop's start input from the arguments, validated as the workflow will validate it: one-line
 * UserErrors naming the argument, the flag (`--tick`) or the --config file's field.
 */
export function startSettings(rawSite: string, options: StartOptions): { site: string; input: SiteHealthInput; checked: ParsedSiteHealthInput } {
  const site = siteArgument(rawSite);
  const input: SiteHealthInput = { ...readConfigFile(options.config), site, tickIntervalMs: parseDuration('--tick', options.tick) };
  const checked = parseSiteHealthInput(input);
  if (!checked.ok) {
    // The tick interval always comes from --tick (it overrides the file): name the flag, not the field.
    const message = checked.message.replace(/(^|; )tickIntervalMs: /g, '$1--tick: ');
    throw new UserError(options.config ? `--config ${options.config}: ${message}` : message.startsWith('--tick: ') ? message : `settings: ${message}`);
  }
  if (checked.value.carried !== undefined) throw new UserError('--config: "carried" is the state of a continued run, not a setting; remove it');
  return { site, input, checked: checked.value };
}

export function registerStartCommand(program: Command, context: () => CliContext): void {
  program
    .command('start')
    .description("register a site and start its health loop (workflow site-health:<site>)")
    .argument('<site>', 'the site, as a host name (shop.example.com) or URL')
    .option('--tick <duration>', 'time between assessments, e.g. 30s, 1m', '60s')
    .option('--owner <contact>', "who is notified when the site degrades (the crawl's owner)")
    .option('--parser-owner <contact>', "who is notified when the site's parser health falls")
    .option('--config <file>', 'JSON settings: window, scoring, policy, timeouts, maxTicksPerRun (see docs/control-loop.md)')
    .action(async (rawSite: string, options: StartOptions) => {
      const { site, input, checked } = startSettings(rawSite, options);

      const ctx = context();
      await upsertSite(await ctx.db(), site, {
        ...(options.owner ? { owner: options.owner } : {}),
        ...(options.parserOwner ? { parserOwner: options.parserOwner } : {}),
      });
      const client = await ctx.temporal();
      const settings = ctx.temporalSettings();
      const workflowId = workflowIdForSite(site);
      const link = workflowUiLink(ctx.uiUrl(), settings.namespace, workflowId);
      const { started } = await startSiteLoop(client, settings.taskQueue, input, checked, options.tick);
      process.stdout.write(started ? `started ${workflowId} (tick ${options.tick})\n${link}\n` : `${workflowId} is already running\n${link}\n`);
      // Without a canary a paused site has no traffic: nothing would show whether it calmed down.
      if ((await listCanaries(await ctx.db(), site)).length === 0) process.stderr.write(`target-health: ${noCanaryWarning(site)}\n`);
    });
}
