/**
 * `target-health replay <site> --from T --to T [--tick 60s] [--config file.json] [--decisions file.json]
 * [--compare other.json] [--json]`: what the live loop would have done over stored traffic, tick by
 * tick (tools/replay/engine.ts), writing nothing. docs/replay.md.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { siteKnown } from '../../server/db/sites';
import { parseDecisionsFile, type ReplayDecision } from '../../tools/replay/decisions-file';
import { replaySite, tickTimes } from '../../tools/replay/engine';
import { compareReplays, formatComparison, formatReplay } from '../../tools/replay/format';
import type { ReplayResult } from '../../tools/replay/types';
import type { CliContext } from '../context';
import { startSettings } from './start';

interface ReplayOptions {
  from?: string;
  to?: string;
  tick: string;
  config?: string;
  compare?: string;
  decisions?: string;
  json?: boolean;
}

/** The longest period one replay walks (a month of 10 s ticks is 260k ticks: split it). */
const MAX_TICKS = 200_000;

/** `2026-11-24T10:00:00Z`, or a UTC date `2026-11-24` (its midnight). */
export function parseTime(flag: string, value: string | undefined): Date {
  if (value === undefined)
    throw new UserError(`${flag}: required, an ISO-8601 time like 2026-11-24T10:00:00Z or a UTC date like 2026-11-24`);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const t = dateOnly || withZone ? Date.parse(dateOnly ? `${value}T00:00:00Z` : value) : Number.NaN;
  if (!Number.isFinite(t))
    throw new UserError(
      `${flag}: ${describeValue(value)} is not a time; use ISO-8601 with a zone (2026-11-24T10:00:00Z) or a ` +
        `UTC date (2026-11-24)`,
    );
  return new Date(t);
}

function readJson(flag: string, path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(
      `${flag}: cannot read ${describeValue(path, 200)} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UserError(
      `${flag}: ${describeValue(path, 200)} is not valid JSON ` +
        `(${(err instanceof Error ? err.message : String(err)).split('\n')[0]})`,
    );
  }
}

export function readDecisions(path: string | undefined): ReplayDecision[] {
  if (path === undefined) return [];
  const parsed = parseDecisionsFile(readJson('--decisions', path));
  if (!parsed.ok) throw new UserError(`--decisions ${path}: ${parsed.message}`);
  return parsed.decisions;
}

/** The loop configuration a replay runs with: defaults, a --config file on top, the tick from --tick. */
export function replayConfig(site: string, tick: string, config: string | undefined): SiteHealthConfig {
  const { checked } = startSettings(site, { tick, ...(config === undefined ? {} : { config }) });
  const { carried: _carried, ...settings } = checked;
  return settings;
}

/** Refuses a site the store has never seen: a typo would otherwise replay a day of "learning". */
export async function requireKnownSite(pool: Pool, site: string): Promise<void> {
  if (!(await siteKnown(pool, site)))
    throw new UserError(
      `site: ${site} is unknown here (no stored traffic, not registered); check the name with \`target-health ` +
        `controls\` or ingest its events first`,
    );
}

export function registerReplayCommand(program: Command, context: () => CliContext): void {
  program
    .command('replay')
    .description('replay the health loop over stored traffic, tick by tick, as live would have run it (writes nothing)')
    .argument('<site>', 'the site (host name or URL)')
    .option('--from <time>', 'start of the period: ISO-8601 time with a zone, or a UTC date')
    .option('--to <time>', 'end of the period (exclusive)')
    .option('--tick <duration>', 'tick interval (ticks fall on its grid, as live)', '60s')
    .option('--config <file>', 'JSON settings as for `start --config`: window, scoring, policy')
    .option('--compare <file>', 'a second settings file: run both and show where they differ')
    .option('--decisions <file>', 'human decisions during the period: [{"at", "kind", "who", "why", "mode"}]')
    .option('--json', 'one JSON line per tick, then the summary')
    .action(async (rawSite: string, options: ReplayOptions) => {
      const config = replayConfig(rawSite, options.tick, options.config);
      const site = config.site;
      const compareWith = options.compare === undefined ? null : replayConfig(rawSite, options.tick, options.compare);
      const from = parseTime('--from', options.from);
      const to = parseTime('--to', options.to);
      if (to.getTime() <= from.getTime())
        throw new UserError(`--to: ${options.to} must be after --from ${options.from}`);
      const ticks = tickTimes(from, to, config.tickIntervalMs).length;
      if (ticks === 0)
        throw new UserError(
          `--from/--to: no tick of the ${options.tick} grid falls in [${from.toISOString()}, ` +
            `${to.toISOString()}); widen the period`,
        );
      if (ticks > MAX_TICKS)
        throw new UserError(
          `--from/--to: ${ticks} ticks of ${options.tick}; replay at most ${MAX_TICKS} at a time (a longer ` +
            `--tick or a shorter period)`,
        );
      const decisions = readDecisions(options.decisions);
      const pool = await context().db();
      await requireKnownSite(pool, site);

      const run = (c: SiteHealthConfig, onTick?: Parameters<typeof replaySite>[1]['onTick']): Promise<ReplayResult> =>
        replaySite(pool, {
          site,
          from,
          to,
          tickMs: c.tickIntervalMs,
          config: c,
          decisions,
          ...(onTick ? { onTick } : {}),
        });
      if (compareWith !== null) {
        const [a, b] = [await run(config), await run(compareWith)];
        const diff = compareReplays(a, b);
        if (options.json) process.stdout.write(`${JSON.stringify(diff)}\n`);
        else process.stdout.write(formatComparison(diff, options.config ?? 'defaults', options.compare!));
        return;
      }
      if (options.json) {
        const result = await run(config, (t) => process.stdout.write(`${JSON.stringify(t)}\n`));
        process.stdout.write(`${JSON.stringify({ summary: result.summary })}\n`);
        return;
      }
      process.stdout.write(formatReplay(await run(config)));
    });
}
