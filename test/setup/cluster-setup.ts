/**
 * Builds the cluster stack's programs (the Temporal server, its SQL tool, the UI server) before any
 * cluster test starts, once per machine: a cold CI machine spends its minutes here, with progress lines,
 * rather than inside a test's timeout. The Temporal CLI (for `temporal operator`) comes the same way.
 */
import { ensureClusterBinaries } from '../../stack/cluster/binaries';
import { ensureTemporalCli } from '../../stack/temporal-cli';

const log = {
  info: (m: string) => process.stderr.write(`[cluster] ${m}\n`),
  warn: (m: string) => process.stderr.write(`[cluster] WARNING ${m}\n`),
};

export default async function clusterSetup(): Promise<void> {
  const started = Date.now();
  await ensureTemporalCli(log);
  const binaries = await ensureClusterBinaries(log);
  log.info(
    `cluster programs ready in ${Math.round((Date.now() - started) / 1000)}s: ${binaries.server}, ${binaries.uiServer}`,
  );
}
