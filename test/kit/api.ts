/**
 * The API server for integration tests: the real `buildApi` on a random port, over the test harness's
 * PostgreSQL and Temporal client, and tokens created as `target-health token create` creates them.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../server/api/server';
import { registerConsoleRoutes } from '../../client/console/routes';
import { apiIngestThreads } from '../../server/api/start-api';
import { apiEnvSchema, type ApiSettings } from '../../server/api/settings';
import { createToken, type Scope } from '../../server/api/tokens';
import type { Logger } from '../../server/logging/logger';
import { join } from 'node:path';
import { ROOT } from './processes';
import { createTestWorker, env, openHarness, type TestHarness, testLogger } from './services';

export interface TestApi {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A fresh token with these scopes (named uniquely); returns the secret. */
  token(scopes: Scope[], name?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * `ingestThreads`: NDJSON event bodies go to worker threads running the compiled worker
 * (dist/server/ingest/ingest-worker.js; `npm test` builds first), as `target-health api` runs them.
 */
export async function startTestApi(
  h: TestHarness,
  overrides: Partial<ApiSettings> = {},
  logger: Logger = testLogger,
  options: { ingestThreads?: boolean; databaseUrl?: string } = {},
): Promise<TestApi> {
  const settings = { ...apiEnvSchema.parse({ TH_API_PORT: '0' }), ...overrides };
  // The threads as `target-health api` runs them (its limits), on the harness's database unless another is named.
  const threads = {
    ...apiIngestThreads(
      join(ROOT, 'dist', 'server', 'ingest', 'ingest-worker.js'),
      options.databaseUrl ?? env('DATABASE_URL'),
    ),
    threads: 2,
  };
  const ingestThreads = options.ingestThreads === true ? { ingestThreads: threads } : {};
  const app = await buildApi({
    pool: h.pool,
    temporal: () => Promise.resolve(h.client),
    taskQueue: h.taskQueue,
    logger,
    settings,
    ...ingestThreads,
    extraRoutes: [registerConsoleRoutes],
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    url,
    token: async (scopes, name = `test-${randomUUID().slice(0, 8)}`) => (await createToken(h.pool, name, scopes)).token,
    close: () => app.close(),
  };
}

/** The harness, a worker running loops on its task queue, and the API (console included) over both. */
export interface ApiHarness {
  h: TestHarness;
  api: TestApi;
  /** Closes the API, stops the worker, closes the harness. */
  close(): Promise<void>;
}

export async function openApiHarness(): Promise<ApiHarness> {
  const h = await openHarness();
  const { worker, connection } = await createTestWorker(h);
  const running = worker.run();
  const api = await startTestApi(h);
  return {
    h,
    api,
    close: async () => {
      await api.close();
      worker.shutdown();
      await running;
      await connection.close();
      await h.close();
    },
  };
}

/** `fetch` with a bearer token. */
export function authed(token: string, init: RequestInit = {}): RequestInit {
  return {
    ...init,
    headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${token}` },
  };
}
