/**
 * Starts the API server on the given settings: a pool, a lazily connected Temporal client, the server
 * listening. Shared by `target-health api` and `npm start` (stack/start.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import type { TemporalSettings } from '../config/env';
import { checkDatabase, createPool } from '../db/pool';
import type { Logger } from '../logging/logger';
import { connectClient } from '../temporal/connect';
import { buildApi } from './server';
import type { ApiSettings } from './settings';

export interface StartedApi {
  url: string;
  close(): Promise<void>;
}

export async function startApi(opts: { databaseUrl: string; temporal: TemporalSettings; settings: ApiSettings; logger: Logger }): Promise<StartedApi> {
  const pool = createPool(opts.databaseUrl, 16);
  await checkDatabase(pool, opts.databaseUrl);
  let client: Promise<{ client: Client; close: () => Promise<void> }> | undefined;
  const temporal = async (): Promise<Client> => {
    client ??= connectClient(opts.temporal).then((connection) => ({ client: new TemporalClient({ connection, namespace: opts.temporal.namespace }), close: () => connection.close() }));
    try {
      return (await client).client;
    } catch (err) {
      // Not reachable now: try again on the next request instead of failing for ever.
      client = undefined;
      throw err;
    }
  };
  // NDJSON event bodies go to worker threads (the compiled worker of `target-health ingest`).
  const script = join(__dirname, '..', 'client', 'ingest-worker.js');
  const ingestThreads = existsSync(script) ? { script, databaseUrl: opts.databaseUrl } : undefined;
  const app = await buildApi({ pool, temporal, taskQueue: opts.temporal.taskQueue, logger: opts.logger, settings: opts.settings, ...(ingestThreads ? { ingestThreads } : {}) });
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
