/**
 * Global setup of the `time-skipping` jest project: provisions Temporal's time-skipping test server
 * (stack/temporal-test-server.ts: the per-machine cache, else a copy from Maven Central) and bundles the
 * workflow code once. Each test starts its own test server (time skipping is global to a server).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureTemporalTestServer, testServerExecutable } from '../../stack/temporal-test-server';
import { bundlerOptions } from '../../worker/workflow-bundle';

const log = {
  info: (m: string) => process.stderr.write(`[time-skipping] ${m}\n`),
  warn: (m: string) => process.stderr.write(`[time-skipping] WARNING ${m}\n`),
};

export default async function timeSkippingSetup(): Promise<void> {
  const server = await ensureTemporalTestServer(log);
  process.env.TH_TEST_SERVER_EXECUTABLE = JSON.stringify(testServerExecutable(server));

  // The integration project's setup may already have bundled the same workflows in this Jest process.
  const shared = process.env.TH_TEST_WORKFLOW_BUNDLE;
  if (shared && existsSync(shared)) {
    process.env.TH_TS_WORKFLOW_BUNDLE = shared;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'target-health-time-skipping-'));
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    ...bundlerOptions(),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: log.warn, error: log.warn },
  });
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  process.env.TH_TS_WORKFLOW_BUNDLE = bundlePath;
  process.env.TH_TS_BUNDLE_DIR = dir;
}
