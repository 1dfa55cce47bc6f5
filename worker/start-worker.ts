/**
 * Everything a worker process does before polling: check PostgreSQL, apply migrations, connect to
 * Temporal, make sure the search attributes exist. Shared by `npm run worker` and `npm start`.
 */
import { hostname } from 'node:os';
import { Runtime, makeTelemetryFilterString, type Worker } from '@temporalio/worker';
import type { TemporalSettings } from '../server/config/env';
import { migrateUp } from '../server/db/migrate';
import { checkDatabase, createPool, type Pool } from '../server/db/pool';
import type { Logger } from '../server/logging/logger';
import { sdkLogger } from '../server/logging/temporal-logger';
import { connectWorker } from '../server/temporal/connect';
import { ensureSearchAttributes } from '../server/temporal/search-attributes';
import { createWorker } from './create-worker';

export interface StartedWorker {
  worker: Worker;
  pool: Pool;
  /** Resolves when the worker has shut down (after a signal or `worker.shutdown()`), resources closed. */
  run(): Promise<void>;
}

let runtimeInstalled = false;

/** The worker's connections' application_name: `target-health worker <pid>@<host>`. */
export function workerApplicationName(): string {
  return `target-health worker ${process.pid}@${hostname()}`.slice(0, 63);
}

/** Sends the SDK's own logs through pino, once per process. */
function installRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({
    logger: sdkLogger(logger),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
  });
}

/**
 * @param options.uiUrl base of the notifications' links (`npm start` passes its dev server's UI); default
 * TEMPORAL_UI_URL.
 * @param options.consoleUrl base of the notifications' console links (`npm start` passes its API's address);
 * default TH_CONSOLE_PUBLIC_URL, else this machine's API.
 */
export async function startWorker(options: {
  temporal: TemporalSettings;
  databaseUrl: string;
  logger: Logger;
  uiUrl?: string;
  consoleUrl?: string;
}): Promise<StartedWorker> {
  const { logger } = options;
  installRuntime(logger);
  // Named after the worker's identity (the SDK's default, `<pid>@<host>`): pg_stat_activity tells which
  // worker holds which connection — an operator's (and the failover tests') way to find a stuck tick.
  const pool = createPool(options.databaseUrl, 10, workerApplicationName());
  try {
    await checkDatabase(pool, options.databaseUrl);
    await migrateUp(options.databaseUrl, logger);
    const connection = await connectWorker(options.temporal);
    const attributes = await ensureSearchAttributes(connection, options.temporal.namespace);
    if (attributes.registered.length > 0)
      logger.info({ registered: attributes.registered }, 'registered search attributes');
    const worker = await createWorker({
      connection,
      namespace: options.temporal.namespace,
      taskQueue: options.temporal.taskQueue,
      pool,
      logger,
      ...(options.uiUrl !== undefined ? { uiUrl: options.uiUrl } : {}),
      ...(options.consoleUrl !== undefined ? { consoleUrl: options.consoleUrl } : {}),
    });
    return {
      worker,
      pool,
      run: async () => {
        try {
          await worker.run();
        } finally {
          await connection.close();
          await pool.end();
        }
      },
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}
