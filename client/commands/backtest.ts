/**
 * `target-health backtest <dir> [--config file.json] [--tick 60s] [--json] [--keep]`: replays every
 * scenario of a directory (`target-health simulate all --out <dir>`) with the loop's own code in scratch
 * databases and prints the scorecard against each scenario's truth, beside simple reference rules
 * (tools/backtest/). Nothing is written to the live database's tables. Without DATABASE_URL the scratch
 * databases live on a private temporary PostgreSQL (tools/backtest/private-server.ts); with it, on that
 * server, whose user then needs CREATEDB.
 *
 * Exit codes: 0 the scorecard was printed; 2 bad input (directory, truth or events file, --config,
 * --tick, DATABASE_URL) — one line naming the file or field; 3 the database failed partway.
 */
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { loadOptionalDatabaseUrl } from '../../server/config/env';
import { formatScorecardJson, formatScorecardText } from '../../tools/backtest/format';
import { withBacktestServer } from '../../tools/backtest/private-server';
import { runBacktest } from '../../tools/backtest/run';
import { replaySite } from '../../tools/replay/engine';
import { parseDuration } from '../durations';

interface BacktestCommandOptions {
  config?: string;
  tick: string;
  json?: boolean;
  keep?: boolean;
}

export function registerBacktestCommand(program: Command): void {
  program
    .command('backtest')
    .description(
      'replay each scenario of a directory (<name>.ndjson + <name>.truth.json) in scratch databases and score ' +
        'the loop and reference rules against the truth',
    )
    .argument('<dir>', 'a scenario directory, as written by `target-health simulate all --out <dir>`')
    .option(
      '--config <file>',
      'JSON loop settings: window, scoring, policy, timeouts (as for `start --config`); default: the product defaults',
    )
    .option('--tick <duration>', 'time between replayed ticks, e.g. 30s, 1m', '60s')
    .option('--json', 'print the scorecard and timings as one JSON document')
    .option('--keep', "keep each scenario's scratch database (their names are printed) instead of dropping it")
    .action(async (dir: string, options: BacktestCommandOptions) => {
      const tickMs = parseDuration('--tick', options.tick);
      const databaseUrl = loadOptionalDatabaseUrl();
      if (databaseUrl === undefined && options.keep === true) {
        throw new UserError(
          '--keep: needs DATABASE_URL (the scratch databases are kept on that server); without it the backtest ' +
            'runs on a private PostgreSQL that is removed at the end',
        );
      }
      const progress = process.stderr.isTTY === true ? (line: string) => process.stderr.write(`${line}\n`) : undefined;
      const result = await withBacktestServer(databaseUrl, (url) =>
        runBacktest({
          dir,
          databaseUrl: url,
          tickMs,
          ...(options.config !== undefined ? { configPath: options.config } : {}),
          keep: options.keep === true,
          replaySite,
          ...(progress ? { onProgress: progress } : {}),
        }),
      );
      process.stdout.write(options.json ? formatScorecardJson(result) : formatScorecardText(result));
    });
}
