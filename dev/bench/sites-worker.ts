/**
 * The sites benchmark's worker process: the production wiring (createWorker: real activities, PostgreSQL
 * pool, default tuning) with the benchmark's bundle, so its CPU and memory are measured on their own.
 * Settings from the environment like the real worker; the bundle path in TH_BENCH_BUNDLE.
 */
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { runMain } from '../../server/bootstrap/run-main';
import { loadDatabaseUrl, loadTemporalSettings } from '../../server/config/env';
import { createPool } from '../../server/db/pool';
import { createLogger } from '../../server/logging/logger';
import { createWorker } from '../../worker/create-worker';

runMain('bench sites worker', async () => {
  const temporal = loadTemporalSettings();
  const bundle = process.env.TH_BENCH_BUNDLE;
  if (!bundle) throw new Error('TH_BENCH_BUNDLE is not set');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const pool = createPool(loadDatabaseUrl(), 10);
  const connection = await NativeConnection.connect({ address: temporal.address });
  const worker = await createWorker({
    connection,
    namespace: temporal.namespace,
    taskQueue: temporal.taskQueue,
    pool,
    logger: createLogger('warn', 'bench-worker'),
    workflowBundlePath: bundle,
  });
  process.stdout.write('bench worker polling\n');
  await worker.run();
  await connection.close();
  await pool.end();
});
