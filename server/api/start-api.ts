/**
 * Starts the API server on the given settings: a pool, a lazily connected Temporal client, the server
 * listening. Shared by `target-health api` and `npm start` (client/start.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import type { TemporalSettings } from '../config/env';
import { checkDatabase, createPool, type Pool, type PoolTimeouts } from '../db/pool';
import type { Logger } from '../logging/logger';
import { connectClient } from '../temporal/connect';
import { buildApi } from './server';
import type { IngestThreadsOptions } from './ingest-threads';
import type { ApiSettings } from './settings';
import type { RegisterRoutes } from './routes';

export interface StartedApi {
  url: string;
  close(): Promise<void>;
}

/**
 * The API's database limits: every answer within a few seconds whatever PostgreSQL does. A request
 * waits at most 3 s for a connection and 4 s for a statement (the server's own limit), 5 s if the server
 * cannot even cancel it (frozen); then it is answered 503 `store_unavailable` with `Retry-After`
 * (docs/operations.md, "Failure behaviour"). The API's statements are small (a token, a site's controls,
 * a page of rows); large event batches go to the ingest threads, which have their own limits.
 */
export const API_POOL_TIMEOUTS: PoolTimeouts = { connectMs: 3_000, statementMs: 4_000 };

/**
 * The ingest threads' limits (NDJSON bodies of `POST /v1/events`, batches of up to 10,000 lines, so a
 * statement may take longer than the API's others): 3 s for a connection, 8 s for a statement, 10 s for
 * a server that cannot cancel it. `target-health ingest` keeps its own (10 s, 60 s).
 */
export const API_INGEST_TIMEOUTS: PoolTimeouts = { connectMs: 3_000, statementMs: 8_000 };

/**
 * The API's ingest threads on `databaseUrl`, running the compiled worker `script`, with {@link API_INGEST_TIMEOUTS}.
 */
export const apiIngestThreads = (script: string, databaseUrl: string, minuteDays?: number): IngestThreadsOptions => ({
  script,
  databaseUrl,
  ...(minuteDays === undefined ? {} : { minuteDays }),
  timeoutMs: API_INGEST_TIMEOUTS.statementMs,
  connectTimeoutMs: API_INGEST_TIMEOUTS.connectMs,
});

/** The API's pool: 16 connections with {@link API_POOL_TIMEOUTS}. */
export const createApiPool = (databaseUrl: string): Pool => createPool(databaseUrl, 16, undefined, API_POOL_TIMEOUTS);

export async function startApi(opts: {
  databaseUrl: string;
  temporal: TemporalSettings;
  settings: ApiSettings;
  logger: Logger;
  /** Route modules of higher layers: the web console (ApiDeps.extraRoutes). */
  extraRoutes?: readonly RegisterRoutes[];
}): Promise<StartedApi> {
  const pool = createApiPool(opts.databaseUrl);
  await checkDatabase(pool, opts.databaseUrl);
  let client: Promise<{ client: Client; close: () => Promise<void> }> | undefined;
  const temporal = async (): Promise<Client> => {
    client ??= connectClient(opts.temporal).then((connection) => ({
      client: new TemporalClient({ connection, namespace: opts.temporal.namespace }),
      close: () => connection.close(),
    }));
    try {
      return (await client).client;
    } catch (err) {
      // Not reachable now: try again on the next request instead of failing for ever.
      client = undefined;
      throw err;
    }
  };
  // NDJSON event bodies go to worker threads (the compiled worker of `target-health ingest`).
  const script = join(__dirname, '..', 'ingest', 'ingest-worker.js');
  const ingestThreads = existsSync(script)
    ? apiIngestThreads(script, opts.databaseUrl, opts.settings.TARGET_HEALTH_MINUTE_DAYS)
    : undefined;
  const app = await buildApi({
    pool,
    temporal,
    taskQueue: opts.temporal.taskQueue,
    logger: opts.logger,
    settings: opts.settings,
    ...(ingestThreads ? { ingestThreads } : {}),
    ...(opts.extraRoutes ? { extraRoutes: opts.extraRoutes } : {}),
  });
  const address = await app.listen({ host: opts.settings.TH_API_HOST, port: opts.settings.TH_API_PORT });
  return {
    url: address,
    close: async () => {
      await app.close();
      if (client !== undefined) await (await client.catch(() => undefined))?.close();
      await pool.end();
    },
  };
}
