/**
 * `npm run stack:cluster`: the production path on this machine (stack/cluster/cluster-stack.ts says what
 * runs). Ctrl-C drains the workers, then stops the UI, the server and PostgreSQL: nothing is left running.
 *   npm run stack:cluster -- --workers 3     three worker processes (default 2)
 *   npm run stack:cluster -- --no-ui         no Temporal UI server
 * Environment: TARGET_HEALTH_DATA_DIR (data; the stack uses data/cluster), TEMPORAL_UI_PORT (8080, as in
 * docker-compose.yml), TARGET_HEALTH_CLUSTER_PG_PORT (54330), DATABASE_URL (another PostgreSQL), LOG_LEVEL.
 */
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { runMain } from '../../server/bootstrap/run-main';
import { loadLogLevel, loadOptionalDatabaseUrl } from '../../server/config/env';
import { UserError } from '../../core/common/user-error';
import { createLogger } from '../../server/logging/logger';
import { RUNNING_SITES_QUERY } from '../../loop/list-queries';
import { writeCliSettings } from '../cli-settings';
import { startClusterStack } from './cluster-stack';

const envSchema = z.object({
  TARGET_HEALTH_DATA_DIR: z.string().min(1).default('data'),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8080),
  TARGET_HEALTH_CLUSTER_PG_PORT: z.coerce.number().int().min(1).max(65535).default(54330),
});

function workerCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 16)
    throw new InvalidArgumentError('--workers takes a whole number from 1 to 16 (default 2)');
  return n;
}

runMain('target-health stack:cluster', async () => {
  const program = new Command('stack:cluster')
    .option('--workers <n>', 'worker processes', workerCount, 2)
    .option('--no-ui', 'no Temporal UI server')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(process.argv);
  } catch (err) {
    const code = (err as { exitCode?: number }).exitCode ?? 2;
    if ((err as { code?: string }).code === 'commander.helpDisplayed') return 0;
    return code === 0 ? 0 : 2;
  }
  const opts = program.opts<{ workers: number; ui: boolean }>();
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`${issue.path.join('.')}: ${issue.message}; unset it or give a valid value`);
  }
  const env = parsed.data;
  const logger = createLogger(loadLogLevel(), 'cluster');
  const dataDir = resolve(join(env.TARGET_HEALTH_DATA_DIR, 'cluster'));
  const external = loadOptionalDatabaseUrl();
  const stack = await startClusterStack({
    dataDir,
    workers: opts.workers,
    ports: 'default',
    uiPort: opts.ui ? env.TEMPORAL_UI_PORT : null,
    postgresPort: env.TARGET_HEALTH_CLUSTER_PG_PORT,
    persistent: true,
    ...(external !== undefined ? { externalDatabaseUrl: external } : {}),
    logger,
  });
  let stopping = false;
  const stopped = new Promise<number>((resolveStop) => {
    const stop = (why: string, code: number): void => {
      if (stopping) return;
      stopping = true;
      logger.info(`${why}: stopping the cluster stack`);
      void stack.stop().then(() => resolveStop(code));
    };
    process.once('SIGINT', () => stop('Ctrl-C', 0));
    process.once('SIGTERM', () => stop('SIGTERM', 0));
    void stack.server.exited.then((how) => {
      if (!stopping) {
        process.stderr.write(`the Temporal server exited (${how}); see ${stack.server.logFile}\n`);
        stop('the Temporal server exited', 3);
      }
    });
    for (const w of stack.workers) {
      void w.exited.then((how) => {
        if (!stopping) logger.error({ log: w.logFile }, `${w.name} exited (${how}); the other workers carry on`);
      });
    }
  });
  const cli = writeCliSettings(dataDir, {
    TEMPORAL_ADDRESS: stack.address,
    ...(stack.uiUrl !== undefined ? { TEMPORAL_UI_URL: stack.uiUrl } : {}),
    ...(external === undefined ? { DATABASE_URL: stack.databaseUrl } : {}),
  });
  const envLine = `set -a; . ${cli.shownPath}; set +a;`;
  process.stdout.write(
    [
      '',
      `  Temporal server: TEMPORAL_ADDRESS=${stack.address} (PostgreSQL persistence and SQL visibility; log ` +
        `${stack.server.logFile})`,
      `  Temporal UI:     ${stack.uiUrl ?? '(not started: --no-ui)'}`,
      `  PostgreSQL:      ` +
        `DATABASE_URL=${stack.shownDatabaseUrl}${external !== undefined ? ' (yours, from the environment)' : ''}`,
      ...stack.workers.map((w) => `  ${w.name}:        pid ${w.pid ?? '?'} (log ${w.logFile})`),
      `  CLI settings:    ${cli.shownPath} (${cli.names.join(', ')}; readable by you only)`,
      `  List sites:      ${envLine} npx target-health temporal workflow list --query "${RUNNING_SITES_QUERY}"`,
      `  Watch a site:    ${envLine} npx target-health start shop.example.com`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n') + '\n',
  );
  return stopped;
});
