/**
 * Helpers for the control-loop integration tests: a site's traffic through the real signal store (a
 * 14-day healthy baseline, then batches of "now" whose mix the test controls), the loop's input with
 * test-sized settings, and readers of what the crawler would see (site_controls and its audit).
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../../activities';
import { workflowIdForSite } from '../../core/common/names';
import type { Pool } from '../../server/db/pool';
import { upsertSite } from '../../server/db/sites';
import { SITE_HEALTH_WORKFLOW, type SiteHealthState, type SiteHealthWorkflow, stateQuery } from '../../loop/messages';
import type { SiteHealthInput } from '../../core/control/config';
import { env, eventually, testLogger } from './services';

import { seedBaseline } from './sites-traffic';

export { ingestNow, seedBaseline, type Mix, type Route } from './sites-traffic';

export const newSite = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}.example.com`;

/** Test-sized loop settings: 1 s ticks, fast smoothing, short activity timeouts. */
export function loopInput(site: string, overrides: Partial<SiteHealthInput> = {}): SiteHealthInput {
  return {
    site,
    tickIntervalMs: 1_000,
    window: { currentWindowMs: 10 * 60_000 },
    // Route confirmation at the 1 s tick's pace (the product's: three ticks over 2 minutes).
    scoring: { smoothing: { halfLifeMs: 1_000 }, routes: { confirmAfterMs: 2_000 } },
    // Steps and the parser alert's persistence at the 1 s tick's pace (the product's are minutes).
    policy: {
      reminderIntervalMs: 60 * 60_000,
      steps: { degradeEveryMs: 1_000, restoreEveryMs: 1_000 },
      parserAlertAfterMs: 2_000,
    },
    timeouts: { activityMs: 5_000 },
    ...overrides,
  };
}

export async function registerSite(pool: Pool, site: string): Promise<void> {
  await upsertSite(pool, site, { owner: `owner@${site}`, parserOwner: `parser@${site}` });
}

export async function startLoop(
  client: Client,
  taskQueue: string,
  input: SiteHealthInput,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  return client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
    workflowId: workflowIdForSite(input.site),
    taskQueue,
    args: [input],
    staticSummary: `Health loop for ${input.site} (test)`,
  });
}

/** Ends a test's loop of `site`, if it still runs (for afterAll: an error ending it is no test's failure). */
export async function terminateLoop(client: Client, site: string): Promise<void> {
  await client.workflow
    .getHandle(workflowIdForSite(site))
    .terminate('test over')
    .catch(() => undefined);
}

/** Polls the `state` query until `predicate` holds. */
export function waitForState(
  handle: WorkflowHandle,
  what: string,
  predicate: (s: SiteHealthState) => boolean,
  timeoutMs = 60_000,
): Promise<SiteHealthState> {
  return eventually(
    async () => {
      const s = await handle.query(stateQuery);
      return predicate(s) ? s : undefined;
    },
    what,
    timeoutMs,
  );
}

/** A worker like createTestWorker's, with the activities' dependencies (e.g. a notifier) chosen by the test. */
export async function createLoopWorker(
  h: { pool: Pool; taskQueue: string },
  deps: Omit<ActivityDeps, 'pool' | 'logger'> & { logger?: ActivityDeps['logger'] },
): Promise<{ worker: Worker; connection: NativeConnection }> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this Jest worker process.
  }
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: h.taskQueue,
    workflowBundle: { codePath: env('TH_TEST_WORKFLOW_BUNDLE') },
    activities: createActivities({ pool: h.pool, ...deps, logger: deps.logger ?? testLogger }),
  });
  return { worker, connection };
}

/** A registered site (owner and parser owner) with a healthy 14-day baseline in the signal store. */
export async function prepareSite(
  pool: Pool,
  prefix: string,
  routes?: Parameters<typeof seedBaseline>[2],
  perRoute?: number,
): Promise<string> {
  const site = newSite(prefix);
  await registerSite(pool, site);
  await seedBaseline(pool, site, routes, perRoute);
  return site;
}

/** Starts a prepared site's loop (a worker must poll `taskQueue`) and waits until it is healthy with controls. */
export async function startHealthySite(
  client: Client,
  taskQueue: string,
  input: SiteHealthInput,
): Promise<{ handle: WorkflowHandleWithFirstExecutionRunId; healthy: SiteHealthState }> {
  const handle = await startLoop(client, taskQueue, input);
  const healthy = await waitForState(
    handle,
    `${input.site} healthy`,
    (s) => s.band === 'healthy' && s.controls !== null,
  );
  return { handle, healthy };
}
