/**
 * `target-health tune <site> [--from] [--to] [--quiet-days 3] [--scenarios dir] [--json] [--apply]` (or `--fleet
 * <patterns>`): learns from people's decisions. The site's incidents are labelled from what people did (a resume
 * soon after a pause into normal traffic, a stop, a pause by hand, a mark from `review --mark`), replayed with
 * candidate settings searched within documented bounds, scored against the labels; the best that passes the guard
 * rail on the scenario set is proposed with its scorecard, the incidents whose outcome changes and why each setting
 * moved. `--apply` sends it through `configure` (validated, audited in settings_changes) with the proposal as the
 * why. docs/tuning.md.
 */
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { siteMatcher } from '../../server/fleet/fleet';
import type { Pool } from '../../server/db/pool';
import { workflowUiLink } from '../../server/config/env';
import type { CliContext } from '../context';
import { parseWhen } from '../on-call/times';
import { runningSettingsOf } from '../running-settings';
import { siteArgument } from '../site-arg';
import { QUIET_LOOKBACK_DAYS } from '../review/quiet-days';
import type * as TuneRunModule from '../tune/run';
import { type TuneReport, tuneReportSchema } from '../tune/schema';
import { renderTune } from '../tune/words';
import { loginName, sendConfigure } from './configure';
import { requireKnownSite } from './replay';

interface TuneCommandOptions {
  from?: string;
  to: string;
  fleet?: string;
  quietDays: string;
  scenarios?: string;
  json?: boolean;
  apply?: boolean;
  who?: string;
}

const DAY = 86_400_000;
export const DEFAULT_PERIOD_DAYS = 7;
/** The longest period one run reads: the store keeps 30 days. */
export const MAX_PERIOD_DAYS = 30;
export const DEFAULT_TUNE_QUIET_DAYS = 3;

/** `--quiet-days`: 1 to QUIET_LOOKBACK_DAYS (tune needs at least one to see false alarms). */
export function parseTuneQuietDays(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > QUIET_LOOKBACK_DAYS)
    throw new UserError(
      `--quiet-days: ${describeValue(value)} is not a number of days from 1 to ${QUIET_LOOKBACK_DAYS}; give e.g. ` +
        `--quiet-days ${DEFAULT_TUNE_QUIET_DAYS}`,
    );
  return n;
}

/** The period: `--to` (default now) and `--from` (default DEFAULT_PERIOD_DAYS before it), checked. */
export function parsePeriod(o: Pick<TuneCommandOptions, 'from' | 'to'>, now: number): { from: number; to: number } {
  const to = parseWhen('--to', o.to, new Date(now)).getTime();
  const from =
    o.from === undefined ? to - DEFAULT_PERIOD_DAYS * DAY : parseWhen('--from', o.from, new Date(now)).getTime();
  if (to > now) throw new UserError(`--to: ${describeValue(o.to)} is in the future; give a past time or now`);
  if (from >= to)
    throw new UserError(`--from: ${describeValue(o.from ?? '')} is not before --to; give an earlier time`);
  if (to - from > MAX_PERIOD_DAYS * DAY)
    throw new UserError(
      `--from: the period is longer than ${MAX_PERIOD_DAYS} days (the store keeps 30); give a later --from`,
    );
  return { from, to };
}

/** The sites `--fleet` names: comma-separated names or globs (`*.example.com`, as `sites --site`) the store knows. */
async function fleetSites(pool: Pool, patterns: string): Promise<string[]> {
  const matches = siteMatcher(patterns.split(',').map((p) => p.trim()));
  const { rows } = await pool.query<{ site: string }>(
    'SELECT site FROM sites UNION SELECT DISTINCT site FROM rollup_day ORDER BY 1',
  );
  const sites = rows.map((r) => r.site).filter(matches);
  if (sites.length === 0)
    throw new UserError(
      `--fleet: ${describeValue(patterns)} matches no site the store knows; give names or globs like *.example.com`,
    );
  return sites;
}

export function registerTuneCommand(program: Command, context: () => CliContext): void {
  program
    .command('tune')
    .description(
      "learn from people's decisions: replay the site's labelled incidents and quiet days with candidate settings, " +
        'propose the best that passes the guard rail (docs/tuning.md)',
    )
    .argument('[site]', 'the site (host name or URL); or --fleet')
    .option('--fleet <sites>', 'comma-separated sites or globs (*.example.com): a proposal per site')
    .option('--from <time>', `start of the period (default ${DEFAULT_PERIOD_DAYS} days before --to)`)
    .option('--to <time>', 'end of the period: ISO-8601 with a zone, a UTC date, now, or a time ago (-3h)', 'now')
    .option(
      '--quiet-days <n>',
      `how many quiet days of the period (whole UTC days with traffic and no incident, most recent first) to ` +
        `replay every candidate over for its false alarms, 1 to ${QUIET_LOOKBACK_DAYS}`,
      String(DEFAULT_TUNE_QUIET_DAYS),
    )
    .option(
      '--scenarios <dir>',
      "the guard rail's scenario set, as written by `simulate all --out <dir>` (default: generated, 2 days each)",
    )
    .option('--json', 'print the report as JSON (one document per site)')
    .option('--apply', 'send the proposal through `configure` (validated, audited; the proposal is its why)')
    .option('--who <who>', 'who applies it (the audit trail); default: your login name')
    .action(async (rawSite: string | undefined, o: TuneCommandOptions) => {
      const now = Date.now();
      if ((rawSite === undefined) === (o.fleet === undefined))
        throw new UserError('site: give one site (target-health tune shop.example.com) or --fleet <sites>, not both');
      const period = parsePeriod(o, now);
      const quietDays = parseTuneQuietDays(o.quietDays);
      const who = o.apply === true ? (o.who ?? loginName()) : undefined;
      if (o.apply === true && who === undefined)
        throw new UserError('--who: required with --apply (no login name to default to), e.g. --who alice@example.com');
      const ctx = context();
      const pool = await ctx.db();
      let sites: string[];
      if (rawSite !== undefined) {
        const site = siteArgument(rawSite);
        await requireKnownSite(pool, site);
        sites = [site];
      } else sites = await fleetSites(pool, o.fleet!);
      const say = (line: string): void => {
        if (o.json !== true) process.stderr.write(`${line}\n`);
      };
      // Loaded here, not at the top: the guard rail's backtest brings the migrations and the ingest with it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose
      const { tuneSite } = require('../tune/run') as typeof TuneRunModule;
      for (const site of sites) {
        let report: TuneReport = await tuneSite(pool, {
          site,
          ...period,
          now,
          quietDays,
          running: () => runningSettingsOf(ctx, site),
          ...(o.scenarios === undefined ? {} : { scenarios: o.scenarios }),
          say,
        });
        if (o.apply === true && report.proposal !== null) {
          const result = await sendConfigure(
            ctx,
            site,
            { who: who!, why: report.proposal.summary, settings: report.proposal.patch },
            {},
          );
          report = {
            ...report,
            applied: {
              changeKey: result.changeKey,
              changedAt: result.changedAt,
              fields: result.changes.map((c) => c.field),
            },
          };
        }
        const checked = tuneReportSchema.parse(report);
        process.stdout.write(o.json === true ? `${JSON.stringify(checked)}\n` : renderTune(checked));
        if (o.apply === true && report.applied !== null && o.json !== true)
          process.stdout.write(
            `${workflowUiLink(ctx.uiUrl(), ctx.temporalSettings().namespace, workflowIdForSite(site))}\n`,
          );
      }
    });
}
