/**
 * The Temporal server of the cluster stack: every service (frontend, history, matching, worker) in one
 * process, configured by deploy/temporal/config/cluster.yaml from the environment (stack/cluster/settings.ts).
 */
import { Connection } from '@temporalio/client';
import { UserError } from '../../core/common/user-error';
import { type ChildHandle, startChild } from './child-process';
import { CLUSTER_DEPLOY_DIR } from './settings';

export function startTemporalServer(binary: string, env: NodeJS.ProcessEnv, logFile: string): ChildHandle {
  // --root/--config: the configuration folder; the environment name (TEMPORAL_ENVIRONMENT) picks cluster.yaml.
  return startChild('Temporal server', binary, ['--root', CLUSTER_DEPLOY_DIR, '--config', 'config', 'start'], {
    env,
    logFile,
  });
}

/** Waits until the frontend answers (the namespace may not exist yet on a first start). */
export async function waitUntilServing(address: string, child: ChildHandle, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (child.exitCode() !== null)
      throw new UserError(`the ${child.name} exited (${await child.exited}) before serving; see ${child.logFile}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw new UserError(
    `the ${child.name} did not serve at ${address} within ${timeoutMs / 1000} s (${lastError}); see ${child.logFile}`,
  );
}
