/**
 * The whole system on embedded defaults, in one process tree: the Temporal dev server with its web UI
 * (SQLite file in the data folder, so runs survive a restart), PostgreSQL (embedded unless DATABASE_URL is
 * set), migrations, the worker and the HTTP API. TEMPORAL_ADDRESS set → that cluster is used instead of a
 * dev server. Shared by `npm start` (client/start.ts) and `npm run demo` (dev/demo/main.ts), which give the API the
 * web console's routes (client/console/: a layer above this one).
 *
 * The API listens on TH_API_HOST:TH_API_PORT (127.0.0.1:8787). When TH_API_PORT is not set and 8787 is
 * taken (another program, a second stack), it takes a free port and prints it: a local stack should
 * start. A port the user chose is theirs: if it is taken, the stack stops with one line naming it.
 *
 * What it reports never holds a password (docs/security.md): the database URL is shown masked, and the
 * settings the CLI needs go into a file only the user can read (stack/cli-settings.ts). The worker gets
 * the address of the UI it started, so notification links point at it.
 */
import { join, resolve } from 'node:path';
import {
  loadConfiguredTemporalUiUrl,
  loadLocalStackSettings,
  loadOptionalDatabaseUrl,
  loadTemporalSettings,
  type TemporalSettings,
  consoleBaseUrl,
} from '../server/config/env';
import type { Logger } from '../server/logging/logger';
import { redactUrl } from '../core/common/redact';
import { startWorker } from '../worker/start-worker';
import { loadApiSettings } from '../server/api/settings';
import { startApi } from '../server/api/start-api';
import type { RegisterRoutes } from '../server/api/routes';
import { UserError } from '../core/common/user-error';
import { freePort, isPortInUse } from './free-port';
import { writeCliSettings } from './cli-settings';
import { setAsideOwnStoppedSettings } from './own-settings';
import { startEmbeddedPostgres } from './embedded-postgres';
import { stopList } from './stop-list';
import { supervisePostgres } from './supervise-postgres';
import { ensureTemporalCli, type TemporalCli } from './temporal-cli';
import { startTemporalDevServer } from './temporal-dev-server';

export interface LocalStack {
  temporal: TemporalSettings;
  /** The Temporal web UI, when known (the dev server's, or TEMPORAL_UI_URL). */
  uiUrl: string | undefined;
  databaseUrl: string;
  /** The database URL with its password masked, for printing. */
  shownDatabaseUrl: string;
  /** True when DATABASE_URL came from the environment (not the embedded PostgreSQL). */
  externalDatabase: boolean;
  apiUrl: string;
  /** The CLI settings file (`set -a; . <file>; set +a` makes `npx target-health …` reach this stack). */
  cliSettings: { shownPath: string; names: string[] };
  /** The Temporal CLI provisioned for the dev server; undefined when TEMPORAL_ADDRESS names a cluster. */
  temporalCli: TemporalCli | undefined;
  /** Runs the worker until SIGINT/SIGTERM (the SDK's runtime drains it), then resolves. */
  runWorker(): Promise<void>;
  /** Stops what was started, in reverse order (after runWorker() has returned). */
  stop(): Promise<void>;
}

export interface LocalStackOptions {
  /** Route modules the API serves beside its own: the web console (server/api/server.ts, `extraRoutes`). */
  apiRoutes?: readonly RegisterRoutes[];
}

export async function startLocalStack(logger: Logger, options: LocalStackOptions = {}): Promise<LocalStack> {
  const local = loadLocalStackSettings();
  const setAside = await setAsideOwnStoppedSettings(resolve(local.dataDir));
  if (setAside !== undefined) {
    logger.info(
      { names: setAside.names, file: setAside.file },
      `${setAside.names.join(', ')} in the environment are this stack's own (from ${setAside.file}, exported ` +
        `earlier) and nothing answers on them: starting the embedded services again`,
    );
  }
  const externalTemporal = process.env.TEMPORAL_ADDRESS !== undefined && process.env.TEMPORAL_ADDRESS !== '';
  let temporal: TemporalSettings = loadTemporalSettings();
  const externalDatabaseUrl = loadOptionalDatabaseUrl();
  // An operator's TEMPORAL_UI_URL wins (a UI behind a reverse proxy); otherwise the dev server's own.
  const configuredUiUrl = loadConfiguredTemporalUiUrl();
  const dataDir = resolve(local.dataDir);

  // Stop in reverse order of start, whatever happens after this point.
  const stops = stopList(logger);
  const stopAll = stops.stopAll;

  try {
    let uiUrl = configuredUiUrl;
    let temporalCli: TemporalCli | undefined;
    if (!externalTemporal) {
      const cli = await ensureTemporalCli(logger);
      temporalCli = cli;
      logger.info(
        { cli: cli.kind === 'binary' ? `${cli.path} (${cli.source})` : 'SDK download' },
        'starting the Temporal dev server',
      );
      const server = await startTemporalDevServer({
        cli,
        port: local.temporalPort,
        uiPort: local.temporalUiPort,
        dbFile: join(dataDir, 'temporal.sqlite'),
        namespace: temporal.namespace,
        logFile: join(dataDir, 'temporal.log'),
        pidFile: join(dataDir, 'temporal.pid'),
        log: { info: (m) => logger.info(m) },
      });
      stops.add('Temporal dev server', () => server.stop());
      temporal = { ...temporal, address: server.address };
      uiUrl = configuredUiUrl ?? server.uiUrl;
    }

    let databaseUrl = externalDatabaseUrl;
    if (!databaseUrl) {
      logger.info({ dataDir: join(dataDir, 'postgres') }, 'starting the embedded PostgreSQL');
      const pg = await startEmbeddedPostgres({
        dataDir: join(dataDir, 'postgres'),
        port: local.postgresPort,
        persistent: true,
        log: { info: (m) => logger.info(m) },
      });
      // The product's role, never the superuser (stack/embedded-postgres.ts).
      databaseUrl = pg.databaseUrl;
      const supervision = supervisePostgres(pg, logger, (message) => {
        logger.error(message);
        process.stderr.write(`${message}\n`);
        process.exitCode = 3;
        // The SDK's runtime drains the worker on SIGTERM; then everything started here is stopped.
        process.kill(process.pid, 'SIGTERM');
      });
      // After the worker has drained (runWorker() returned): no restart may start the server again.
      stops.add('PostgreSQL', async () => {
        supervision.stop();
        await pg.stop();
      });
    }

    const apiSettings = loadApiSettings();
    const apiPortChosen = process.env.TH_API_PORT !== undefined && process.env.TH_API_PORT !== '';
    if (apiSettings.TH_API_PORT !== 0 && (await isPortInUse(apiSettings.TH_API_PORT, apiSettings.TH_API_HOST))) {
      if (apiPortChosen)
        throw new UserError(
          `TH_API_PORT: port ${apiSettings.TH_API_PORT} is already in use (another \`npm start\` or ` +
            `\`target-health api\`?); stop it or choose another port`,
        );
      logger.warn(
        `port ${apiSettings.TH_API_PORT} is in use: the API takes a free port (set TH_API_PORT to choose one)`,
      );
      apiSettings.TH_API_PORT = 0;
    }
    // The notifications link to the console this API serves: its port is known before the worker starts
    // (a free one is picked here rather than by the listener), unless TH_CONSOLE_PUBLIC_URL says otherwise.
    if (apiSettings.TH_API_PORT === 0) apiSettings.TH_API_PORT = await freePort();
    const consoleUrl = consoleBaseUrl(
      apiSettings.TH_CONSOLE_PUBLIC_URL,
      apiSettings.TH_API_HOST,
      apiSettings.TH_API_PORT,
    );
    const started = await startWorker({
      temporal,
      databaseUrl,
      logger,
      consoleUrl,
      ...(uiUrl !== undefined ? { uiUrl } : {}),
    });
    // After the worker: it has applied the migrations the API's tables need.
    const api = await startApi({
      databaseUrl,
      temporal,
      settings: apiSettings,
      logger,
      ...(options.apiRoutes ? { extraRoutes: options.apiRoutes } : {}),
    });
    stops.add('API', () => api.close());
    const cliSettings = writeCliSettings(dataDir, {
      TEMPORAL_ADDRESS: temporal.address,
      ...(uiUrl !== undefined ? { TEMPORAL_UI_URL: uiUrl } : {}),
      // The operator's own DATABASE_URL is theirs to keep: it is not copied into another file.
      ...(externalDatabaseUrl === undefined ? { DATABASE_URL: databaseUrl } : {}),
      // The API's base URL, for crawlers and curl started from another terminal (the port may be a free one).
      TH_API: api.url,
    });
    return {
      temporal,
      uiUrl,
      databaseUrl,
      shownDatabaseUrl: redactUrl(databaseUrl),
      externalDatabase: externalDatabaseUrl !== undefined,
      apiUrl: api.url,
      cliSettings,
      temporalCli,
      runWorker: () => started.run(),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
