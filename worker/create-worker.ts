/**
 * Builds the Target Health worker: the workflow bundle plus activities wired to PostgreSQL. Used by
 * the worker entry, the local stack (`npm start`) and the tests, so all run the same wiring.
 */
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { loadWorkerTuning } from '../server/config/env';
import type { Pool } from '../server/db/pool';
import type { Logger } from '../server/logging/logger';
import { bundlerOptions } from './workflow-bundle';

export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  pool: Pool;
  logger: Logger;
  /** Base of the links in notifications; default TEMPORAL_UI_URL (activities/index.ts). */
  uiUrl?: string;
  /** Base of the console links in notifications; default TH_CONSOLE_PUBLIC_URL, else this machine's API. */
  consoleUrl?: string;
  /** A pre-built bundle (tests bundle once); otherwise the workflows are bundled at start. */
  workflowBundlePath?: string;
  /**
   * Worker tuning overrides (tests use small pollers); otherwise the environment's
   * (server/config/env.ts loadWorkerTuning).
   */
  tuning?: Partial<
    Pick<
      WorkerOptions,
      | 'maxConcurrentActivityTaskExecutions'
      | 'maxConcurrentWorkflowTaskExecutions'
      | 'maxCachedWorkflows'
      | 'stickyQueueScheduleToStartTimeout'
      | 'identity'
    >
  >;
}

export function workflowsPath(): string {
  return require.resolve('../workflows');
}

export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const tuning = loadWorkerTuning();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundlePath
      ? { workflowBundle: { codePath: options.workflowBundlePath } }
      : { workflowsPath: workflowsPath(), bundlerOptions: bundlerOptions() }),
    activities: createActivities({
      pool: options.pool,
      logger: options.logger,
      ...(options.uiUrl !== undefined ? { uiUrl: options.uiUrl } : {}),
      ...(options.consoleUrl !== undefined ? { consoleUrl: options.consoleUrl } : {}),
    }),
    // On SIGTERM, in-flight activities get 10 s to finish; after 30 s the worker stops even if the
    // server is unreachable (a shutdown must never hang a deploy). Activities are idempotent, so an
    // interrupted one is simply retried by the next worker.
    shutdownGraceTime: '10 seconds',
    shutdownForceTime: '30 seconds',
    ...(tuning.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: tuning.maxCachedWorkflows }),
    ...(tuning.stickyQueueScheduleToStartTimeoutMs === undefined
      ? {}
      : { stickyQueueScheduleToStartTimeout: tuning.stickyQueueScheduleToStartTimeoutMs }),
    ...options.tuning,
  });
}
