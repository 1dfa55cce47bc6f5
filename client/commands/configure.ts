/**
 * `target-health configure <site>`: change a running loop's settings — the same setting flags as
 * `start` (`--tick`, `--owner`, `--parser-owner`, `--config file.json`) — through the loop's `configure`
 * update. The workflow validates the change against the settings it has (a refusal is one line naming
 * the flag or the file's field, exit 2, and changes nothing), records it (who, when, old → new), and puts
 * it in force from the next tick; it survives continue-as-new. Only what is given changes: `--config`
 * holds the settings to change, nested like the start input, and the others keep their values.
 */
import { userInfo } from 'node:os';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { workflowUiLink } from '../../server/config/env';
import { readSettingsFile } from '../../server/config/settings-file';
import {
  type ConfigureInput,
  type ConfigureResult,
  type SettingChange,
  configureUpdate,
  configurePayloadSchema,
} from '../../loop/messages';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import type { CliContext } from '../context';
import { parseDuration } from '../durations';
import { siteArgument } from '../site-arg';
import { executeUpdateRetrying } from '../../server/temporal/update-retry';

export interface ConfigureOptions {
  tick?: string;
  owner?: string;
  parserOwner?: string;
  config?: string;
  who?: string;
  why?: string;
  json?: boolean;
}

/** The login name: who changed the settings when `--who` is not given. */
export function loginName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/** The update's payload from the flags (what `temporal workflow update execute --name configure` would send). */
export function configurePayload(
  o: ConfigureOptions,
  defaultWho: () => string | undefined = loginName,
): ConfigureInput {
  const settings: Record<string, unknown> = {
    ...(o.config === undefined ? {} : readSettingsFile(o.config)),
    // --tick overrides the file's tickIntervalMs, as with `start`.
    ...(o.tick === undefined ? {} : { tickIntervalMs: parseDuration('--tick', o.tick) }),
  };
  if (Object.keys(settings).length === 0 && o.owner === undefined && o.parserOwner === undefined) {
    throw new UserError('configure: nothing to change: give --tick, --owner, --parser-owner or --config <file.json>');
  }
  const who = o.who ?? defaultWho();
  if (who === undefined)
    throw new UserError('--who: required (no login name to default to), e.g. --who alice@example.com');
  const payload: ConfigureInput = {
    who,
    ...(o.why === undefined ? {} : { why: o.why }),
    ...(Object.keys(settings).length === 0 ? {} : { settings }),
    ...(o.owner === undefined ? {} : { owner: o.owner }),
    ...(o.parserOwner === undefined ? {} : { parserOwner: o.parserOwner }),
  };
  // The workflow validates the whole change; the flags' own shape is checked here without a round trip.
  const checked = configurePayloadSchema().safeParse(payload);
  if (!checked.success) throw new UserError(refusalAsFlags(`configure: ${formatIssues(checked.error)}`, o));
  return payload;
}

const FLAGS: Record<string, string> = { who: '--who', why: '--why', owner: '--owner', parserOwner: '--parser-owner' };

/**
 * The workflow's refusal (`configure: settings.tickIntervalMs: …; settings.policy.x: …`) in the terms the
 * user typed: `--tick 500ms: …`, `--config file.json: policy.x: …`, `--owner: …`.
 */
export function refusalAsFlags(message: string, o: Pick<ConfigureOptions, 'tick' | 'config'>): string {
  const body = message.replace(/^configure: /, '');
  const parts = body.split('; ').map((part) => {
    const field = /^([A-Za-z]+)(\.[^:]*)?: (.*)$/s.exec(part);
    if (field === null) return part;
    const [, head, rest = '', text] = field;
    if (head === 'settings') {
      if (rest === '.tickIntervalMs' && o.tick !== undefined) return `--tick ${o.tick}: ${text}`;
      const inner = rest === '' ? text : `${rest.slice(1)}: ${text}`;
      return o.config !== undefined ? `--config ${o.config}: ${inner}` : `settings: ${inner}`;
    }
    const flag = FLAGS[head!];
    return flag !== undefined && rest === '' ? `${flag}: ${text}` : part;
  });
  const line = parts.join('; ');
  return line.startsWith('--') || line.startsWith('settings') ? line : `configure: ${line}`;
}

function showValue(field: string, value: SettingChange['old']): string {
  if (value === null) return '—';
  if (typeof value === 'number' && /Ms$/.test(field)) {
    for (const [unit, ms] of [
      ['d', 86_400_000],
      ['h', 3_600_000],
      ['m', 60_000],
      ['s', 1_000],
    ] as const) {
      if (value >= ms && value % ms === 0) return `${value / ms}${unit}`;
    }
    return `${value}ms`;
  }
  return typeof value === 'string' ? value : String(value);
}

/** What changed, old → new, one line per field, then when the next tick comes. */
export function formatConfigured(r: ConfigureResult, link: string): string {
  if (r.changes.length === 0) return `${r.message}\n${link}\n`;
  const width = Math.max(...r.changes.map((c) => c.field.length));
  const lines = [
    `${r.message} at ${r.changedAt ?? '—'} (change ${r.changeKey}):`,
    ...r.changes.map((c) => `  ${c.field.padEnd(width)}  ${showValue(c.field, c.old)} → ${showValue(c.field, c.new)}`),
    `in force from the next tick${r.nextTickAt === null ? '' : ` (${r.nextTickAt})`}; tick every ` +
      `${showValue('tickIntervalMs', r.tickIntervalMs)}`,
    link,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Sends a validated `configure` update to the site's loop (retried like every update) and returns its answer; a
 * refusal is one line in the terms of `flags` (the file or flag the user gave). `tune --apply` sends its proposal
 * through here, so it is validated and audited (settings_changes) exactly like `configure`.
 */
export async function sendConfigure(
  ctx: CliContext,
  site: string,
  payload: ConfigureInput,
  flags: Pick<ConfigureOptions, 'tick' | 'config'>,
): Promise<ConfigureResult> {
  const client = await ctx.temporal();
  const workflowId = workflowIdForSite(site);
  try {
    return await executeUpdateRetrying(client.workflow.getHandle(workflowId), configureUpdate, [payload]);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new UserError(`site: no running health loop for ${site}; start one with \`target-health start ${site}\``);
    if (err instanceof WorkflowUpdateFailedError)
      throw new UserError(refusalAsFlags(err.cause?.message ?? err.message, flags));
    throw err;
  }
}

async function configure(rawSite: string, o: ConfigureOptions, context: () => CliContext): Promise<void> {
  const site = siteArgument(rawSite);
  const payload = configurePayload(o);
  const ctx = context();
  const link = workflowUiLink(ctx.uiUrl(), ctx.temporalSettings().namespace, workflowIdForSite(site));
  const result = await sendConfigure(ctx, site, payload, o);
  process.stdout.write(o.json ? `${JSON.stringify(result)}\n` : formatConfigured(result, link));
}

export function registerConfigureCommand(program: Command, context: () => CliContext): void {
  program
    .command('configure')
    .description(
      "change a running site loop's settings from its next tick on (validated, recorded: who, when, old → new)",
    )
    .argument('<site>', 'the site, as a host name (shop.example.com) or URL')
    .option('--tick <duration>', 'time between assessments, e.g. 30s, 1m')
    .option('--owner <contact>', "who is notified when the site degrades (the crawl's owner)")
    .option('--parser-owner <contact>', "who is notified when the site's parser health falls")
    .option(
      '--config <file>',
      'JSON settings to change (only the fields given): window, scoring, policy, timeouts, maxTicksPerRun (see ' +
        'docs/control-loop.md)',
    )
    .option('--who <who>', 'who changes them (goes into the audit trail); default: your login name')
    .option('--why <why>', 'why, in a sentence')
    .option('--json', 'print the answer as JSON')
    .action((site: string, o: ConfigureOptions) => configure(site, o, context));
}
