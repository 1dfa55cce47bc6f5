/** `target-health start <site>`: register a site and start its control loop. */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../common/names';
import { UserError } from '../../common/user-error';
import { workflowUiLink } from '../../config/env';
import { readSettingsFile } from '../../config/settings-file';
import { upsertSite } from '../../db/sites';
import { siteArgument } from '../site-arg';
import { parseSiteHealthInput, type ParsedSiteHealthInput, type SiteHealthInput } from '../../control/config';
import { SITE_HEALTH_WORKFLOW, type SiteHealthWorkflow } from '../../control/messages';
import { attributesForNewRun } from '../../control/search-attributes';
import type { CliContext } from '../context';
import { parseDuration } from '../durations';

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

/** The run's static details in the Temporal UI: how this loop was configured. */
export function staticDetails(c: ParsedSiteHealthInput): string {
  const p = c.policy;
  const b = c.scoring.bands;
  return [
    `Scores how **${c.site}** treats the crawler every ${c.tickIntervalMs / 1000} s against its own normal (baseline ${c.window.baselineMs / 86_400_000} days, current window ${c.window.currentWindowMs / 60_000} min).`,
    '',
    '| band | score | action |',
    '|---|---|---|',
    `| healthy | ≥ ${b.healthyMin} | none; after a degradation restore +${p.concurrency.increaseStep} concurrency every ${p.steps.restoreEveryMs / 1000} s up to ${p.concurrency.nominal} |`,
    `| degrading | ${b.degradingMin}–${b.healthyMin - 1} | concurrency ×${p.concurrency.decreaseFactor} every ${p.steps.degradeEveryMs / 1000} s (floor ${p.concurrency.floor}), revisit ×${p.revisit.increaseFactor} (max ×${p.revisit.max}), cost raised, owner notified |`,
    `| resisting | < ${b.degradingMin} or total refusal | pause, canaries only, notify the owner, **wait for a person** (reminders every ${p.reminderIntervalMs / 60_000} min) |`,
    '',
    `Smoothing half-life ${c.scoring.smoothing.halfLifeMs / 60_000} min, hysteresis ${b.hysteresis} points. Parser health below ${p.parserAlertBelow} for ${p.parserAlertAfterMs / 1000} s alerts the parser owner. Decide with \`target-health decide resume|stop|pause ${c.site}\`.`,
  ].join('\n');
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
      try {
        await client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
          workflowId,
          taskQueue: settings.taskQueue,
          args: [input],
          typedSearchAttributes: attributesForNewRun(site, { band: 'learning', awaiting: null, smoothedScore: null, parserHealth: null, problem: null }),
          staticSummary: `Health loop for ${site} (tick ${options.tick})`,
          staticDetails: staticDetails(checked),
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
