/**
 * Access to the shared test services (started by test/setup/global-setup.ts) and a worker per test,
 * each on its own task queue so test files running in parallel never pick up each other's tasks.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import pino from 'pino';
import { createPool, type Pool } from '../../server/db/pool';
import { createWorker } from '../../worker/create-worker';

export function env(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run integration tests through jest (global setup starts the services)`);
  return value;
}

export const testLogger = pino({ level: process.env.LOG_LEVEL ?? 'warn' });

/** One Runtime per Jest worker process, logging only warnings (the SDK logs every state change at INFO). */
function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier test file in this Jest worker process.
  }
}

export interface TestHarness {
  client: Client;
  pool: Pool;
  taskQueue: string;
  close(): Promise<void>;
}

export async function openHarness(): Promise<TestHarness> {
  const connection = await Connection.connect({ address: env('TEMPORAL_ADDRESS') });
  const pool = createPool(env('DATABASE_URL'), 4);
  return {
    client: new Client({ connection, namespace: 'default' }),
    pool,
    taskQueue: `test-${randomUUID()}`,
    close: async () => {
      await connection.close();
      await pool.end();
    },
  };
}

export async function createTestWorker(
  harness: TestHarness,
  taskQueue = harness.taskQueue,
): Promise<{ worker: Worker; connection: NativeConnection }> {
  installQuietRuntime();
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await createWorker({
    connection,
    namespace: 'default',
    taskQueue,
    pool: harness.pool,
    logger: testLogger,
    workflowBundlePath: env('TH_TEST_WORKFLOW_BUNDLE'),
  });
  return { worker, connection };
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? lastError.message : JSON.stringify(lastError);
      throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${cause})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
