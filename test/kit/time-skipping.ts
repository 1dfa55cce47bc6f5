/**
 * The time-skipping test layer: the real workflow bundle on Temporal's time-skipping test server
 * (provisioned by test/setup/time-skipping-setup.ts), with stub activities typed from the real ones, for
 * what real-time tests cannot reach quickly: hours between reminders, days of waiting for a person, a
 * day of delivery retries. Server time moves only through `testEnv.sleep(…)` and while a client awaits
 * a workflow's result; it never moves while a workflow task or an activity is outstanding, so a test
 * that skips ahead sees every tick due before the new time, and nothing after it.
 */
import { randomUUID } from 'node:crypto';
import { type EphemeralServerExecutable, TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../../loop/search-attributes';

function env(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run time-skipping tests through jest (the project's global setup provisions the ` +
        `test server)`,
    );
  return value;
}

function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed by an earlier test file in this Jest worker process.
  }
}

/**
 * A test server of its own for the calling test (time skipping is global to a server), with the
 * product's search attributes registered as the worker registers them.
 */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  const executable = JSON.parse(env('TH_TEST_SERVER_EXECUTABLE')) as EphemeralServerExecutable;
  // The SDK gives a starting server 5 s to open its port; a JVM on a busy two-core machine can miss
  // that. Retry the start (never a test body) up to three times, and say so. Both of the SDK's
  // wordings: "Failed connecting to test server", "ephemeral server … did not start within 5s".
  let testEnv: TestWorkflowEnvironment | undefined;
  for (let attempt = 1; testEnv === undefined; attempt++) {
    try {
      testEnv = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable } });
    } catch (err) {
      const missed = /Failed connecting to test server|did not start within/.test(
        err instanceof Error ? err.message : String(err),
      );
      if (!missed || attempt >= 4) throw err;
      process.stderr.write(
        `[time-skipping] the test server missed the SDK's 5 s start window; starting it again (attempt ` +
          `${attempt + 1})\n`,
      );
    }
  }
  await registerSearchAttributes(testEnv);
  return testEnv;
}

const INDEXED: Partial<Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType>> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  [SearchAttributeType.BOOL]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
};

/**
 * The test server refuses upserts of unknown search attributes, like a real server. It has no
 * ListSearchAttributes (so not the worker's server/temporal/search-attributes.ts check): add them directly.
 */
async function registerSearchAttributes(testEnv: TestWorkflowEnvironment): Promise<void> {
  const searchAttributes: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const key of ALL_SEARCH_ATTRIBUTE_KEYS) {
    const type = INDEXED[key.type];
    if (type === undefined)
      throw new Error(`search attribute ${key.name}: no indexed type for ${key.type} in test/kit/time-skipping.ts`);
    searchAttributes[key.name] = type;
  }
  await testEnv.connection.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes });
}

/** A worker on its own task queue running the real workflow bundle with the given (stub) activities. */
export async function createStubWorker(
  testEnv: TestWorkflowEnvironment,
  activities: object,
): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = `time-skipping-${randomUUID()}`;
  const worker = await Worker.create({
    connection: testEnv.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: { codePath: env('TH_TS_WORKFLOW_BUNDLE') },
    activities,
  });
  return { worker, taskQueue };
}

/**
 * The test server's clock (skipped time): what stub activities read where the real ones read the
 * database clock. Not the activity info's `currentAttemptScheduledTimestampMs`: for a retry the test
 * server stamps that when it decides to retry, a backoff interval before the attempt runs.
 */
export function serverClock(testEnv: TestWorkflowEnvironment): () => Promise<number> {
  return () => testEnv.currentTimeMs();
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** Prints the file's wall time when it ends (the acceptance: each in seconds of wall time). */
export function reportWallTime(file: string): void {
  const started = Date.now();
  afterAll(() => {
    process.stderr.write(`[time-skipping] ${file}: ${((Date.now() - started) / 1000).toFixed(1)} s wall time\n`);
  });
}
