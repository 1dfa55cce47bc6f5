/**
 * `npm start`: the whole system on embedded defaults, in one process tree (stack/local-stack.ts says what
 * runs), the API serving the web console (client/console/: this entry lives in the client layer because the
 * console does). Ctrl-C drains the worker, then stops the API, PostgreSQL and the dev server: nothing is left
 * running.
 */
import { runMain } from '../server/bootstrap/run-main';
import { loadLogLevel } from '../server/config/env';
import { createLogger } from '../server/logging/logger';
import { bannerLines } from '../stack/banner';
import { startLocalStack } from '../stack/local-stack';
import { registerConsoleRoutes } from './console/routes';

runMain('target-health start', async () => {
  const logger = createLogger(loadLogLevel(), 'stack');
  const stack = await startLocalStack(logger, { apiRoutes: [registerConsoleRoutes] });
  try {
    const { temporal, uiUrl, apiUrl, cliSettings, shownDatabaseUrl } = stack;
    logger.info(
      {
        temporal: temporal.address,
        ui: uiUrl ?? '(see your cluster)',
        database: shownDatabaseUrl,
        api: apiUrl,
        taskQueue: temporal.taskQueue,
      },
      'Target Health is running — Ctrl-C to stop',
    );
    process.stdout.write(
      bannerLines({
        uiUrl,
        temporalAddress: temporal.address,
        shownDatabaseUrl,
        externalDatabase: stack.externalDatabase,
        apiUrl,
        cliSettings,
        temporalCli: stack.temporalCli,
      }).join('\n') + '\n',
    );
    // The SDK's runtime shuts the worker down on SIGINT/SIGTERM; runWorker() returns once it has drained.
    await stack.runWorker();
  } finally {
    await stack.stop();
  }
});
