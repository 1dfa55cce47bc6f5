/**
 * `target-health history <site> [--from T] [--to T] [--every D] [--json]`: a site's ticks over a range —
 * time, band, score / smoothed, parser health, reasons, control changes and decisions — from the stored
 * assessments (the smoothed score stored with each tick), `control_audit` and `decisions` (docs/on-call.md),
 * aggregated per interval when long.
 */
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { historyQuery, stateQuery } from '../../loop/messages';
import { decisionsBetween, siteSpan } from '../../server/db/history';
import { openRecord, storedTicksIn, storedTraffic } from '../loop-record/open';
import { runningSettingsOf } from '../running-settings';
import { replayConfig } from './replay';
import { alertRow } from '../../core/control/alerts';
import { parseDuration } from '../durations';
import {
  type History,
  type LiveTicks,
  MAX_ROWS,
  aggregate,
  bucketCount,
  defaultEvery,
  formatHistory,
  smoothedScoresNote,
  tickRows,
} from '../on-call/history';
import { parseWhen } from '../on-call/times';
import { siteArgument } from '../site-arg';
import type { CliContext } from '../context';

interface HistoryOptions {
  from: string;
  to: string;
  every?: string;
  config?: string;
  tick?: string;
  json?: boolean;
}

const LIVE_TIMEOUT_MS = 10_000;

/**
 * The running loop's last 50 ticks (what each tick did, and the smoothed scores of ticks stored before they
 * were stored with the tick), or why there are none. A loop that is not running, or a Temporal server that
 * does not answer in 10 s, leaves the history without them — said in the output, never a failure: everything
 * else is in PostgreSQL. (3 s was too short on a loaded machine: connecting and two queries took longer at a
 * load of 20 on two cores.)
 */
async function liveTicks(
  connect: () => Promise<Client>,
  site: string,
): Promise<{ live: LiveTicks | null; problem: string | null }> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`Temporal did not answer in ${LIVE_TIMEOUT_MS / 1000} s`)),
        LIVE_TIMEOUT_MS,
      )),
  );
  try {
    const read = (async () => {
      const handle = (await connect()).workflow.getHandle(workflowIdForSite(site));
      const state = await handle.query(stateQuery);
      return { chainId: state.chainId, ticks: await handle.query(historyQuery, 50) };
    })();
    read.catch(() => undefined);
    return { live: await Promise.race([read, limit]), problem: null };
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    return { live: null, problem: /not found/i.test(why) ? 'the site has no running loop' : why };
  } finally {
    clearTimeout(timer);
  }
}

export function registerHistoryCommand(program: Command, context: () => CliContext): void {
  program
    .command('history')
    .description(
      "a site's tick history over a range: band, score / smoothed (stored with each tick), reasons, control " +
        'changes, decisions',
    )
    .argument('<site>', 'the site (host name or URL)')
    .option('--from <time>', 'start (ISO-8601 with a zone, a UTC date, or a time ago: -6h, 2d)', '-24h')
    .option('--to <time>', 'end, exclusive (same forms; now by default)', 'now')
    .option(
      '--every <duration>',
      `one row per interval (e.g. 15m, 1h); default: one row per tick up to 500 ticks, else the smallest ` +
        `interval that keeps it under 500 rows`,
    )
    .option(
      '--config <file>',
      'the ticks a replay with these settings (as for `start --config`) would have made, instead of the stored ones',
    )
    .option(
      '--tick <duration>',
      "a replay's tick (with --config, or where no live loop ticked; default: the settings' own)",
    )
    .option('--json', 'print the history as JSON')
    .action(async (rawSite: string, options: HistoryOptions) => {
      const site = siteArgument(rawSite);
      const now = new Date();
      const from = parseWhen('--from', options.from, now);
      const to = parseWhen('--to', options.to, now);
      if (to.getTime() <= from.getTime())
        throw new UserError(
          `--to: ${describeValue(options.to)} (${to.toISOString()}) must be after --from ` +
            `${describeValue(options.from)} (${from.toISOString()})`,
        );
      const explicitEvery = options.every === undefined ? null : parseDuration('--every', options.every);
      if (explicitEvery !== null && bucketCount(from, to, explicitEvery) > MAX_ROWS) {
        throw new UserError(
          `--every: ${describeValue(options.every)} gives ${bucketCount(from, to, explicitEvery)} rows over ` +
            `this range; use a longer interval (at most ${MAX_ROWS} rows)`,
        );
      }
      const tickMs = options.tick === undefined ? null : parseDuration('--tick', options.tick);
      if (options.config !== undefined) replayConfig(site, '60s', options.config);
      const ctx = context();
      const pool = await ctx.db();
      const span = await siteSpan(pool, site);
      const storedTicks = await storedTicksIn(pool, site, from, to);
      if (!storedTicks && !(await storedTraffic(pool, site, from, to))) {
        if (!span.known && !(await storedTraffic(pool, site, new Date(0), now)))
          throw new UserError(
            `site: ${site} is unknown here (no assessments, traffic, controls or registration); list the sites ` +
              `with \`target-health sites\``,
          );
        if (span.first === null)
          throw new UserError(
            `site: ${site} has no ticks stored yet; start its loop with \`target-health start ${site}\``,
          );
        throw new UserError(
          `--from/--to: no ticks of ${site} between ${from.toISOString()} and ${to.toISOString()}, and no ` +
            `stored traffic to replay them from` +
            (span.first === null || span.last === null
              ? ''
              : `; its ticks run from ${span.first.toISOString()} to ${span.last.toISOString()}`),
        );
      }
      const { record } = await openRecord(pool, {
        site,
        period: { from, to },
        settingsAt: from,
        ...(options.config === undefined ? {} : { configFile: options.config }),
        tickMs,
        storedTicks,
        running: () => runningSettingsOf(ctx, site),
        now: now.getTime(),
      });
      const stored = record.source.kind === 'stored';
      const [ticks, changes, decisions, before, live, alerts] = await Promise.all([
        record.ticks(from, to),
        record.changes(from, to),
        decisionsBetween(pool, site, from, to),
        record.bandBefore(from),
        stored ? liveTicks(() => ctx.temporal(), site) : Promise.resolve({ live: null, problem: null }),
        record.alerts(from, to),
      ]);
      if (ticks.length === 0) {
        throw new UserError(
          `--from/--to: no tick of the replay falls between ${from.toISOString()} and ${to.toISOString()}; widen ` +
            `the range or give a shorter --tick`,
        );
      }
      const rows = tickRows(
        ticks,
        changes,
        decisions,
        before,
        live.live,
        alerts.map((a) => alertRow(a, site)),
      );
      const everyMs = explicitEvery ?? defaultEvery(to.getTime() - from.getTime(), rows.length);
      const history: History = {
        site,
        from: from.toISOString(),
        to: to.toISOString(),
        ticks: rows.length,
        everyMs,
        smoothedScores:
          record.source.kind === 'stored'
            ? smoothedScoresNote(ticks, live.live, live.problem)
            : 'from the replay: every tick has its own',
        source: record.source,
        rows: everyMs === null ? rows : aggregate(rows, everyMs),
      };
      if (options.json) process.stdout.write(`${JSON.stringify(history)}\n`);
      else process.stdout.write(formatHistory(history));
    });
}
