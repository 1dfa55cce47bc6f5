/**
 * `target-health sites`: the fleet at a glance, most urgent first (docs/on-call.md), read by
 * server/fleet/read-fleet.ts (which the console's Fleet page reads too). The rows come from
 * the code behind `GET /v1/sites` (server/api/site-list.ts): the loops' search attributes through Temporal
 * visibility, the raw score and the last control change from PostgreSQL, since when a site waits from
 * the waiting loops' `state` query; the score's sparkline over the last 24 h from `assessments`, in one
 * statement for all listed sites (server/db/score-trend.ts).
 */
import type { Command } from 'commander';
import { buildFleet, type Fleet, formatFleet, parseBands } from '../../server/fleet/fleet';
import { readFleet } from '../../server/fleet/read-fleet';
import { watch, watchInterval } from '../on-call/watch';
import type { CliContext } from '../context';

interface SitesOptions {
  band: string[];
  awaiting?: boolean;
  site: string[];
  json?: boolean;
  watch?: string | true;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

async function readFleetOf(context: () => CliContext, filter: Fleet['filter']): Promise<Fleet> {
  const ctx = context();
  return readFleet({ client: await ctx.temporal(), pool: await ctx.db() }, filter);
}

export function registerSitesCommand(program: Command, context: () => CliContext): void {
  program
    .command('sites')
    .description(
      "the fleet at a glance: band, score / smoothed, the last day's trend, parser health, waiting since, last " +
        'change and why — most urgent first',
    )
    .option(
      '--band <band>',
      'only these bands: learning, healthy, degrading, resisting (repeat, or separate with commas)',
      collect,
      [],
    )
    .option('--awaiting', 'only the sites waiting for a person')
    .option(
      '--site <pattern>',
      'only sites whose name contains this, or matches this glob (*.example.com); repeatable',
      collect,
      [],
    )
    .option('--json', 'print the listing as JSON (one document; one per line with --watch)')
    .option('--watch [interval]', 'refresh every interval (default 5s) until Ctrl-C')
    .action(async (options: SitesOptions) => {
      const filter: Fleet['filter'] = {
        bands: parseBands(options.band),
        awaiting: options.awaiting === true,
        site: options.site,
      };
      // Checked now, before any connection: a bad pattern or interval is the user's line to fix.
      buildFleet([], filter, new Date());
      const intervalMs = options.watch === undefined ? null : watchInterval(options.watch);
      const render = async (): Promise<string> => {
        const fleet = await readFleetOf(context, filter);
        return options.json ? `${JSON.stringify(fleet)}\n` : formatFleet(fleet, new Date());
      };
      if (intervalMs === null) {
        process.stdout.write(await render());
        return;
      }
      await watch({
        intervalMs,
        render,
        write: (text) => process.stdout.write(text),
        writeError: (line) => process.stderr.write(`target-health: ${line}\n`),
        tty: process.stdout.isTTY === true && !options.json,
        ...(options.json
          ? {}
          : { header: (at: Date) => `— ${at.toISOString()} · every ${intervalMs / 1000}s · Ctrl-C to stop —` }),
      });
    });
}
