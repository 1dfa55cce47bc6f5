/**
 * The production path on one machine (`npm run stack:cluster`, docs/operations.md "The cluster stack"):
 * the real Temporal server (go.temporal.io/server, built from source) on PostgreSQL with SQL visibility,
 * its schemas created by the server's own SQL tool, the namespace and search attributes registered with
 * `temporal operator`, the Temporal UI server, and two or more worker processes. Temporal's settings are
 * docker-compose.yml's (deploy/temporal/: the same values, config template and scripts).
 *
 * PostgreSQL is the embedded one (one server holds Temporal's two databases and the product's), unless
 * DATABASE_URL names another: then Temporal's databases go on that server, beside the product's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { localTemporalUiUrl } from '../../server/config/env';
import { PROJECT_ROOT } from '../../server/config/paths';
import { redactUrl } from '../../core/common/redact';
import { UserError } from '../../core/common/user-error';
import type { Logger } from '../../server/logging/logger';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../embedded-postgres';
import { stopList } from '../stop-list';
import { freeLowPort, isPortInUse } from '../free-port';
import { ensureTemporalCli } from '../temporal-cli';
import { ensureClusterBinaries } from './binaries';
import { type ChildHandle, startChild, waitForLogLine } from './child-process';
import { runDeployScript } from './run-script';
import { waitForSearchAttributes } from './search-attributes-ready';
import {
  type ClusterDatabase,
  type ClusterPorts,
  DEFAULT_CLUSTER_PORTS,
  loadClusterEnv,
  registerEnv,
  schemaEnv,
  serverEnv,
  uiEnv,
} from './settings';
import { startTemporalServer, waitUntilServing } from './temporal-server';

export interface ClusterStackOptions {
  /** Data and logs (persistent PostgreSQL under it unless `persistent` is false). */
  dataDir: string;
  workers: number;
  /** 'free': every port chosen free (tests); otherwise docker-compose.yml's ports. */
  ports: 'default' | 'free';
  /** The UI's port; null: no UI. */
  uiPort: number | null;
  postgresPort: number;
  /** false: the PostgreSQL data folder is deleted on stop (tests). */
  persistent: boolean;
  /** Another PostgreSQL (DATABASE_URL): Temporal's databases are created on it, beside the product's. */
  externalDatabaseUrl?: string;
  logger: Logger;
  logLevel?: string;
}

export interface ClusterStack {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  /** The product's database, as its workers log in (the embedded server's product role, or DATABASE_URL). */
  databaseUrl: string;
  /**
   * The same server as a role that can make databases and roles: the embedded server's superuser (which
   * Temporal's own databases use too), or DATABASE_URL. The tests' scratch databases; never the workers'.
   */
  adminDatabaseUrl: string;
  shownDatabaseUrl: string;
  server: ChildHandle;
  workers: ChildHandle[];
  /** Resolves once the worker polls its task queue (it bundles the workflow code first: seconds). */
  polling(worker: ChildHandle, timeoutMs?: number): Promise<void>;
  /**
   * Stops the Temporal server (SIGTERM, as a deploy does) and starts it again on the same database and
   * ports; resolves once it serves. `server` is the new process afterwards. (The failover tests.)
   */
  restartServer(): Promise<void>;
  /**
   * The embedded PostgreSQL (Temporal's databases and the product's) stopped — a fast shutdown, every
   * connection cut — kept down for `downMs`, and started again on the same data. (The failover tests;
   * not available with DATABASE_URL.)
   */
  restartPostgres(downMs: number): Promise<void>;
  /** Stops what was started, in reverse order: workers (drained), UI, server, PostgreSQL. */
  stop(): Promise<void>;
}

async function choosePorts(kind: ClusterStackOptions['ports']): Promise<ClusterPorts> {
  if (kind === 'default') {
    for (const [name, port] of Object.entries(DEFAULT_CLUSTER_PORTS) as Array<[string, number]>) {
      if (await isPortInUse(port))
        throw new UserError(
          `port ${port} (the Temporal server's ${name} port) is already in use (a dev server from \`npm ` +
            `start\`, another cluster?); stop it first`,
        );
    }
    return DEFAULT_CLUSTER_PORTS;
  }
  // Below 32768 (membership ports are a smallint in Temporal's schema), and all different.
  const taken = new Set<number>();
  const ports: Record<string, number> = {};
  for (const key of Object.keys(DEFAULT_CLUSTER_PORTS)) {
    const port = await freeLowPort(taken);
    taken.add(port);
    ports[key] = port;
  }
  return ports as unknown as ClusterPorts;
}

/** PostgreSQL's fast shutdown (SIGINT to the postmaster: every session cut, data kept); resolves once it has exited. */
async function fastShutdown(pgDataDir: string): Promise<void> {
  const pid = Number(readFileSync(join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new UserError(`PostgreSQL (pid ${pid}) did not shut down within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function databaseOf(url: string): ClusterDatabase {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

export async function startClusterStack(options: ClusterStackOptions): Promise<ClusterStack> {
  const { logger } = options;
  const dataDir = resolve(options.dataDir);
  const workerMain = join(PROJECT_ROOT, 'dist', 'worker', 'main.js');
  if (options.workers > 0 && !existsSync(workerMain))
    throw new UserError(`${workerMain} is missing: run \`npm run build\` first (npm run stack:cluster does)`);
  const provisionLog = { info: (m: string) => logger.info(m), warn: (m: string) => logger.warn(m) };
  const cli = await ensureTemporalCli(provisionLog);
  if (cli.kind !== 'binary')
    throw new UserError(
      'the cluster stack registers its namespace with the Temporal CLI, which needs Go to build (or `temporal` ' +
        'on PATH)',
    );
  const binaries = await ensureClusterBinaries(provisionLog);
  const shared = loadClusterEnv();
  const namespace = shared.DEFAULT_NAMESPACE ?? 'default';
  const ports = await choosePorts(options.ports);
  const address = `127.0.0.1:${ports.frontend}`;

  const stops = stopList(logger);
  const stopAll = stops.stopAll;
  try {
    let databaseUrl = options.externalDatabaseUrl;
    let adminDatabaseUrl = databaseUrl;
    let pg: EmbeddedPostgresHandle | null = null;
    if (databaseUrl === undefined) {
      const embedded = await startEmbeddedPostgres({
        dataDir: join(dataDir, 'postgres'),
        port: options.postgresPort,
        persistent: options.persistent,
        log: { info: (m) => logger.info(m) },
      });
      stops.add('PostgreSQL', () => embedded.stop());
      databaseUrl = embedded.databaseUrl;
      adminDatabaseUrl = embedded.superuserUrl;
      pg = embedded;
    }
    // Temporal's setup creates its own databases: the embedded server's superuser does that (and owns them).
    const db = databaseOf(adminDatabaseUrl ?? databaseUrl);
    const setupLog = join(dataDir, 'logs', 'temporal-setup.log');
    const schema = await runDeployScript('setup-schema.sh', schemaEnv(shared, db, binaries.sqlTool), setupLog);
    // The script's own lines (the SQL tool's log lines are in the set-up log).
    logger.info(
      { schema: schema.filter((l) => /^(created database|database .* exists|schema of)/.test(l)) },
      "Temporal's databases are ready",
    );

    const startServer = (): ChildHandle =>
      startTemporalServer(binaries.server, serverEnv(shared, db, ports), join(dataDir, 'logs', 'temporal-server.log'));
    let server = startServer();
    stops.add('Temporal server', () => server.stop());
    await waitUntilServing(address, server);
    const registered = await runDeployScript('register.sh', registerEnv(shared, address, cli.path), setupLog);
    const readyInMs = await waitForSearchAttributes(address, namespace);
    logger.info({ registered, readyInMs }, 'namespace and search attributes in force');

    let uiUrl: string | undefined;
    if (options.uiPort !== null) {
      if (await isPortInUse(options.uiPort))
        throw new UserError(
          `TEMPORAL_UI_PORT: port ${options.uiPort} is already in use; stop what uses it or choose another port`,
        );
      const ui = startChild(
        'Temporal UI server',
        binaries.uiServer,
        ['--root', binaries.uiConfigDir, '--config', '.', '--env', 'docker', 'start'],
        {
          env: uiEnv(shared, address, options.uiPort),
          logFile: join(dataDir, 'logs', 'temporal-ui.log'),
        },
      );
      stops.add('Temporal UI server', () => ui.stop());
      uiUrl = localTemporalUiUrl(options.uiPort);
    }

    const workerEnv: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: options.logLevel ?? process.env.LOG_LEVEL ?? 'info',
      ...(uiUrl !== undefined ? { TEMPORAL_UI_URL: uiUrl } : {}),
    };
    const workers: ChildHandle[] = [];
    const addWorker = (): ChildHandle => {
      const n = workers.length + 1;
      const w = startChild(`worker ${n}`, process.execPath, [workerMain], {
        env: workerEnv,
        logFile: join(dataDir, 'logs', `worker-${n}.log`),
      });
      workers.push(w);
      return w;
    };
    for (let i = 0; i < options.workers; i++) addWorker();
    // Workers drain in-flight tasks on SIGTERM (the SDK's runtime); all of them at once.
    stops.add('workers', async () => void (await Promise.all(workers.map((w) => w.stop(30_000)))));

    const polling = (w: ChildHandle, timeoutMs = 180_000): Promise<void> =>
      waitForLogLine(w, /"msg":"worker polling"/, 'polling its task queue', timeoutMs);
    await Promise.all(workers.map((w) => polling(w)));
    const restartServer = async (): Promise<void> => {
      await server.stop();
      server = startServer();
      await waitUntilServing(address, server);
    };
    const restartPostgres = async (downMs: number): Promise<void> => {
      if (pg === null)
        throw new UserError('restartPostgres: the stack runs on DATABASE_URL, not its embedded PostgreSQL');
      await fastShutdown(join(dataDir, 'postgres'));
      await new Promise((r) => setTimeout(r, downMs));
      await pg.restart();
    };
    return {
      address,
      namespace,
      uiUrl,
      databaseUrl,
      adminDatabaseUrl: adminDatabaseUrl ?? databaseUrl,
      shownDatabaseUrl: redactUrl(databaseUrl),
      get server() {
        return server;
      },
      workers,
      polling,
      restartServer,
      restartPostgres,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
