/**
 * The worker entry (`npm run worker`, the Docker image): settings from the environment, then poll the
 * `target-health` task queue until SIGINT/SIGTERM, finishing in-flight tasks before exiting.
 */
import { runMain } from '../server/bootstrap/run-main';
import { loadDatabaseUrl, loadLogLevel, loadTemporalSettings } from '../server/config/env';
import { deploymentCatalogue } from '../server/config/marker-catalogue';
import { createLogger } from '../server/logging/logger';
import { startWorker } from './start-worker';

runMain('target-health worker', async () => {
  const logLevel = loadLogLevel();
  const temporal = loadTemporalSettings();
  const databaseUrl = loadDatabaseUrl();
  const logger = createLogger(logLevel, 'worker');
  // The canaries' classifier uses the deployment's marker file: a bad one stops the worker here, in one line.
  deploymentCatalogue();
  const started = await startWorker({ temporal, databaseUrl, logger });
  logger.info(
    { address: temporal.address, namespace: temporal.namespace, taskQueue: temporal.taskQueue },
    'worker polling',
  );
  await started.run();
  logger.info('worker stopped');
});
