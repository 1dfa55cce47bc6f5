/** `target-health start <site>`: register a site and start its control loop. */
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { workflowUiLink } from '../../server/config/env';
import { readSettingsFile } from '../../server/config/settings-file';
import { upsertSite } from '../../server/db/sites';
import { crawlerCanaryTraffic, listCanaries } from '../../server/db/canaries';
import { CRAWLER_CANARY_LOOKBACK_MS, crawlerCanaryNote, noCanaryWarning } from '../on-call/canary-hint';
import { siteArgument } from '../site-arg';
import { parseSiteHealthInput, type ParsedSiteHealthInput, type SiteHealthInput } from '../../core/control/config';
import { queryRunningSettings } from '../running-settings';
import { askedChanges } from '../settings-diff';
import { startSiteLoop } from '../../server/temporal/start-loop';
import type { CliContext } from '../context';
import { parseDuration } from '../durations';

export { staticDetails } from '../../server/temporal/start-loop';

export interface StartOptions {
  tick: string;
  owner?: string;
  parserOwner?: string;
  config?: string;
}

/** Settings from `--config <file.json>`: any of window, scoring, policy, timeouts, maxTicksPerRun. */
function readConfigFile(path: string | undefined): Partial<SiteHealthInput> {
  return path === undefined ? {} : readSettingsFile(path);
}

/**
 * The loop's start input from the arguments, validated as the workflow will validate it: one-line
 * UserErrors naming the argument, the flag (`--tick`) or the --config file's field.
 */
export function startSettings(
  rawSite: string,
  options: StartOptions,
): { site: string; input: SiteHealthInput; checked: ParsedSiteHealthInput } {
  const site = siteArgument(rawSite);
  const input: SiteHealthInput = {
    ...readConfigFile(options.config),
    site,
    tickIntervalMs: parseDuration('--tick', options.tick),
  };
  const checked = parseSiteHealthInput(input);
  if (!checked.ok) {
    // The tick interval always comes from --tick (it overrides the file): name the flag, not the field.
    const message = checked.message.replace(/(^|; )tickIntervalMs: /g, '$1--tick: ');
    // Only --tick wrong: name the flag alone, even beside a --config file (the user typed --tick, not the file).
    const onlyTick = message.split('; ').every((part) => part.startsWith('--tick: '));
    throw new UserError(
      onlyTick ? message : options.config ? `--config ${options.config}: ${message}` : `settings: ${message}`,
    );
  }
  if (checked.value.carried !== undefined)
    throw new UserError('--config: "carried" is the state of a continued run, not a setting; remove it');
  return { site, input, checked: checked.value };
}

/**
 * `start` on a running site changes nothing: when the user asked for other settings than the loop runs
 * with, say which and how to apply them (exit 2 — what was asked did not happen).
 */
async function reportSettingsDiff(
  client: Client,
  workflowId: string,
  checked: ParsedSiteHealthInput,
  given: Record<string, unknown>,
  site: string,
  options: StartOptions,
): Promise<void> {
  if (Object.keys(given).length === 0) return;
  const running = await queryRunningSettings(client, site);
  if (!running.ok) {
    process.stderr.write(
      `could not compare settings with the running loop (${running.reason}); \`target-health configure ${site} ` +
        `…\` changes a running loop's settings\n`,
    );
    return;
  }
  const { carried: _carried, ...wanted } = checked;
  const changes = askedChanges(running.settings, wanted, given);
  if (changes.length === 0) return;
  process.stderr.write(
    `${workflowId} runs with other settings than this start asks for; nothing was ` +
      `changed:\n${changes.map((c) => `  ${c.path}: ${c.running} (running) → ${c.wanted} (asked)\n`).join('')}`,
  );
  const flags = [
    ...(given.tickIntervalMs !== undefined ? [`--tick ${options.tick}`] : []),
    ...(options.config !== undefined ? [`--config ${options.config}`] : []),
  ];
  throw new UserError(
    `start: ${site} is already running with other settings; apply them with \`target-health configure ${site} ` +
      `${flags.join(' ')}\``,
  );
}

export function registerStartCommand(program: Command, context: () => CliContext): void {
  program
    .command('start')
    .description('register a site and start its health loop (workflow site-health:<site>)')
    .argument('<site>', 'the site, as a host name (shop.example.com) or URL')
    .option('--tick <duration>', 'time between assessments, e.g. 30s, 1m', '60s')
    .option('--owner <contact>', "who is notified when the site degrades (the crawl's owner)")
    .option('--parser-owner <contact>', "who is notified when the site's parser health falls")
    .option(
      '--config <file>',
      'JSON settings: window, scoring, policy, timeouts, maxTicksPerRun (see docs/control-loop.md)',
    )
    .action(async (rawSite: string, options: StartOptions, command: Command) => {
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
      process.stdout.write(
        started
          ? `started ${workflowId} (tick ${options.tick})\n${link}\n`
          : `${workflowId} is already running\n${link}\n`,
      );
      // Without a canary a paused site has no traffic but its crawler's own canary requests: without
      // those, nothing would show whether it calmed down.
      const pool = await ctx.db();
      if ((await listCanaries(pool, site)).length === 0) {
        const now = Date.now();
        const crawler = await crawlerCanaryTraffic(
          pool,
          site,
          new Date(now - CRAWLER_CANARY_LOOKBACK_MS),
          new Date(now),
        );
        process.stderr.write(
          `target-health: ${crawler.requests > 0 ? crawlerCanaryNote(site, crawler) : noCanaryWarning(site)}\n`,
        );
      }
      if (!started) {
        // The settings the user typed (not the defaults filled in for the rest) are what a start asks for.
        const given: Record<string, unknown> = {
          ...readConfigFile(options.config),
          ...(command.getOptionValueSource('tick') === 'default' ? {} : { tickIntervalMs: input.tickIntervalMs }),
        };
        await reportSettingsDiff(client, workflowId, checked, given, site, options);
      }
    });
}
