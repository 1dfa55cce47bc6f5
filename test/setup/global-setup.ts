/**
 * Starts the real services the integration tests share: the Temporal dev server (in memory, headless,
 * provisioned by the same script as `npm start`) and an embedded PostgreSQL in a temporary folder,
 * migrated. Bundles the workflow code once. Tests find them through process.env.
 *
 * TEST_SERVER=cluster runs the same tests on the production path instead: the cluster stack's Temporal
 * server (stack/cluster, built from source on first use) on PostgreSQL with SQL visibility, no workers of
 * its own (each test starts its own), its PostgreSQL also holding the product's database.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { migrateUp } from '../../server/db/migrate';
import { createPool } from '../../server/db/pool';
import pgLib from 'pg';
import { TEMPLATE_DATABASE } from '../kit/private-database';
import { freePort } from '../../stack/free-port';
import { startEmbeddedPostgres } from '../../stack/embedded-postgres';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { startTemporalDevServer } from '../../stack/temporal-dev-server';
import { startClusterStack } from '../../stack/cluster/cluster-stack';
import pino from 'pino';
import { workflowsPath } from '../../worker/create-worker';
import { bundlerOptions } from '../../worker/workflow-bundle';

const log = {
  info: (m: string) => process.stderr.write(`[test services] ${m}\n`),
  warn: (m: string) => process.stderr.write(`[test services] WARNING ${m}\n`),
};

export default async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'target-health-test-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter this folder.
  chmodSync(dir, 0o755);

  const cli = await ensureTemporalCli(log);
  const [temporalPort, pgPort] = [await freePort(), await freePort()];
  let server: { address: string; stop(): Promise<void> };
  // databaseUrl: the product's role (owns the tables, not a superuser: migrations run as it, as in
  // `npm start`); adminUrl: what the tests get as DATABASE_URL, able to make scratch databases and roles.
  let pg: { databaseUrl: string; adminUrl: string; stop(): Promise<void> };
  if (process.env.TEST_SERVER === 'cluster') {
    log.info('TEST_SERVER=cluster: the Temporal server of the cluster stack on PostgreSQL');
    const cluster = await startClusterStack({
      dataDir: join(dir, 'cluster'),
      workers: 0,
      ports: 'free',
      uiPort: null,
      postgresPort: pgPort,
      persistent: false,
      logger: pino({ level: 'warn' }),
    });
    server = { address: cluster.address, stop: () => cluster.stop() };
    // The cluster stack stops its PostgreSQL itself.
    pg = { databaseUrl: cluster.databaseUrl, adminUrl: cluster.adminDatabaseUrl, stop: () => Promise.resolve() };
  } else if (process.env.TEST_SERVER !== undefined && process.env.TEST_SERVER !== 'dev') {
    throw new Error(`TEST_SERVER: "${process.env.TEST_SERVER}" is not a server; use dev (the default) or cluster`);
  } else {
    const [devServer, embedded] = await Promise.all([
      startTemporalDevServer({ cli, port: temporalPort, namespace: 'default', logFile: join(dir, 'temporal.log') }),
      startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), port: pgPort, persistent: false }),
    ]);
    server = devServer;
    pg = { databaseUrl: embedded.databaseUrl, adminUrl: embedded.superuserUrl, stop: () => embedded.stop() };
  }
  await migrateUp(pg.databaseUrl);
  // A migrated copy nobody connects to: tests that need DDL of their own (triggers on the store's tables)
  // clone it into a private database instead of changing tables that parallel test files write to.
  const admin = createPool(pg.adminUrl, 1);
  // Owned by the role that owns its tables, as the product's database is: the clones' public schema
  // (owned by the database's owner) then lets the store's SECURITY DEFINER function create partitions.
  const owner = decodeURIComponent(new URL(pg.databaseUrl).username);
  await admin.query(
    `CREATE DATABASE ${TEMPLATE_DATABASE} TEMPLATE ${new URL(pg.databaseUrl).pathname.slice(1)} OWNER ` +
      `${pgLib.escapeIdentifier(owner)}`,
  );
  await admin.end();

  const bundle = await bundleWorkflowCode({
    workflowsPath: workflowsPath(),
    ...bundlerOptions(),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: log.warn, error: log.warn },
  });
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);

  process.env.TEMPORAL_ADDRESS = server.address;
  process.env.TEMPORAL_NAMESPACE = 'default';
  process.env.DATABASE_URL = pg.adminUrl;
  process.env.TH_TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env.TH_TEST_DIR = dir;
  process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn';

  (globalThis as Record<string, unknown>).__TH_SERVICES__ = {
    stop: async () => Promise.all([server.stop(), pg.stop()]),
  };
}
