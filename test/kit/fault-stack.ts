/**
 * The real stack, owned by one fault test so the test can break it: a Temporal dev server on a SQLite
 * file and an embedded PostgreSQL on a persistent data folder — each killable (or stoppable) and
 * restartable on the same port and the same files — plus worker processes (`node dist/worker/main.js`)
 * and CLI runs (`client/bin/target-health.js`). Nothing here is shared with the integration project's services.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { createPool, type Pool } from '../../server/db/pool';
import { freePort, isPortInUse } from '../../stack/free-port';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { startTemporalDevServer, type DevServerHandle } from '../../stack/temporal-dev-server';
import { CLI, ROOT, WORKER, cleanEnv, run } from './processes';

/** The full form (`npm run test:faults`): minute-long outages and bigger volumes; otherwise CI-sized. */
export const FULL = process.env.TH_FAULTS_FULL === '1';

/** Polls `probe` every `everyMs` until it returns a value (not undefined); fails naming what it waited for. */
export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const last =
        lastError === undefined
          ? ''
          : ` (last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** A child process whose output is kept (for failure messages) and whose exit is awaitable. */
export class Child {
  /** Every child a test started and has not seen exit: closing the stack kills what is left. */
  static readonly live = new Set<Child>();
  private out = '';
  private stdoutText = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly proc: ChildProcess) {
    proc.stdout?.on('data', (d: Buffer) => {
      this.out += d.toString();
      this.stdoutText += d.toString();
    });
    proc.stderr?.on('data', (d: Buffer) => (this.out += d.toString()));
    // 'close', not 'exit': the output is complete by then.
    this.exited = new Promise((resolve) => proc.once('close', (code, signal) => resolve({ code, signal })));
    Child.live.add(this);
    void this.exited.then(() => Child.live.delete(this));
  }

  /** SIGKILLs every child still running (a failed test's ingest run or worker). */
  static async killAll(): Promise<void> {
    await Promise.all([...Child.live].map((c) => c.kill('SIGKILL')));
  }

  /** stdout and stderr, interleaved as they came. */
  get output(): string {
    return this.out;
  }

  get stdout(): string {
    return this.stdoutText;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async waitForOutput(pattern: RegExp, what: string, timeoutMs: number): Promise<void> {
    await until(
      () => {
        if (pattern.test(this.out)) return true;
        if (!this.alive)
          throw new Error(
            `${what}: the process exited (${this.proc.exitCode ?? this.proc.signalCode}) first; ` +
              `output:\n${this.out.slice(-4000)}`,
          );
        return undefined;
      },
      what,
      timeoutMs,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\noutput:\n${this.out.slice(-4000)}`);
    });
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.alive) this.proc.kill(signal);
    await this.exited;
  }
}

/**
 * The embedded PostgreSQL runs under a small controller process (from dist/, as `npm start` runs it, so a
 * fault test can kill the controller like a stack): it starts the server on the data folder, prints the
 * product role's URL, and stops it when told — or when this process goes away and its stdin closes, so no
 * server is left behind.
 */
const PG_CONTROLLER = `
const { startEmbeddedPostgres } = require(${JSON.stringify(join(ROOT, 'dist', 'stack', 'embedded-postgres.js'))});
(async () => {
  const pg = await startEmbeddedPostgres({
    dataDir: process.env.PG_DIR, port: Number(process.env.PG_PORT), persistent: true,
  });
  process.stdout.write('READY ' + pg.databaseUrl + '\\n');
  let stopping;
  const stop = () => (stopping ??= pg.stop().then(() => process.exit(0)));
  process.stdin.on('data', (d) => { if (String(d).includes('stop')) void stop(); });
  process.stdin.on('end', () => void stop());
})().catch((err) => {
  process.stderr.write(String(err && err.message ? err.message : err) + '\\n');
  process.exit(1);
});
`;

function signalIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    // A backend that ended after it was listed.
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export class FaultPostgres {
  private controller: Child | undefined;
  databaseUrl = '';

  constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {}

  get running(): boolean {
    return this.controller?.alive === true;
  }

  async start(): Promise<void> {
    const child = new Child(
      spawn(process.execPath, ['-e', PG_CONTROLLER], {
        cwd: ROOT,
        env: cleanEnv({ PG_DIR: this.dataDir, PG_PORT: String(this.port) }),
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    // Stopped by stop(), never SIGKILLed: that would leave its PostgreSQL running.
    Child.live.delete(child);
    this.controller = child;
    await child.waitForOutput(/^READY /m, `PostgreSQL to start on port ${this.port}`, 120_000);
    this.databaseUrl = /^READY (\S+)/m.exec(child.output)![1]!;
  }

  /** The postmaster and its backends: all must stop for the server to be frozen. */
  serverProcesses(): number[] {
    const postmaster = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === postmaster) children.push(Number(entry));
      } catch {
        // The process ended while we looked.
      }
    }
    return [postmaster, ...children];
  }

  /**
   * SIGSTOP of the postmaster and every backend: the server answers nothing (connections stay open,
   * new ones are accepted by the kernel and never answered) until {@link thaw}. Returns the pids.
   */
  freeze(): number[] {
    const pids = this.serverProcesses();
    for (const pid of pids) signalIfAlive(pid, 'SIGSTOP');
    this.frozen = pids;
    return pids;
  }

  thaw(): void {
    for (const pid of [...this.frozen].reverse()) signalIfAlive(pid, 'SIGCONT');
    this.frozen = [];
  }

  private frozen: number[] = [];

  /** A clean (fast) shutdown: every connection is cut, the data stays. */
  async stop(): Promise<void> {
    if (this.frozen.length > 0) this.thaw();
    const child = this.controller;
    this.controller = undefined;
    if (!child || !child.alive) return;
    child.proc.stdin!.end('stop\n');
    const { code } = await child.exited;
    if (code !== 0) throw new Error(`PostgreSQL did not stop cleanly (exit ${code}): ${child.output.slice(-2000)}`);
  }
}

export class FaultTemporal {
  private handle: DevServerHandle | undefined;

  constructor(
    readonly dbFile: string,
    readonly port: number,
    readonly logFile: string,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const cli = await ensureTemporalCli({
      info: () => undefined,
      warn: (m) => process.stderr.write(`[faults] ${m}\n`),
    });
    this.handle = await startTemporalDevServer({
      cli,
      port: this.port,
      dbFile: this.dbFile,
      namespace: 'default',
      logFile: this.logFile,
    });
  }

  private get pid(): number {
    const pid = this.handle?.pid;
    if (pid === undefined)
      throw new Error('the Temporal dev server is not running as a process of ours (no temporal binary?)');
    return pid;
  }

  /** SIGKILL: no shutdown of any kind; returns once the process is gone and the port is free. */
  async kill(): Promise<void> {
    const pid = this.pid;
    process.kill(pid, 'SIGKILL');
    await until(() => (processGone(pid) ? true : undefined), 'the killed dev server to be gone', 30_000, 50);
    await until(
      async () => ((await isPortInUse(this.port)) ? undefined : true),
      `port ${this.port} to be free`,
      30_000,
      100,
    );
    await this.handle?.stop();
    this.handle = undefined;
  }

  /** SIGSTOP: the server answers nothing until thawed (a reply in flight stays unanswered). */
  freeze(): void {
    process.kill(this.pid, 'SIGSTOP');
  }

  thaw(): void {
    process.kill(this.pid, 'SIGCONT');
  }

  async stop(): Promise<void> {
    if (this.handle?.pid !== undefined && !processGone(this.handle.pid)) this.thaw();
    await this.handle?.stop();
    this.handle = undefined;
  }
}

/** A worker process on the stack's task queue. */
export class WorkerProcess extends Child {
  /** SIGKILL: the process gets no chance to finish or report anything. */
  async crash(): Promise<void> {
    await this.kill('SIGKILL');
  }
}

/** PostgreSQL alone (for the CLI's faults), migrated by `target-health migrate`. */
export interface FaultDatabase {
  dir: string;
  postgres: FaultPostgres;
  pool: Pool;
  /** Environment for the CLI: this database. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

function workDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `target-health-faults-${name}-`));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter this folder.
  chmodSync(dir, 0o755);
  return dir;
}

export async function startFaultDatabase(name: string): Promise<FaultDatabase> {
  const dir = workDir(name);
  const postgres = new FaultPostgres(join(dir, 'postgres'), await freePort());
  await postgres.start();
  const envOf = (extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
    cleanEnv({ DATABASE_URL: postgres.databaseUrl, LOG_LEVEL: 'warn', ...extra });
  const migrated = await run(CLI, ['migrate'], envOf());
  if (migrated.code !== 0) throw new Error(`target-health migrate failed (${migrated.code}): ${migrated.stderr}`);
  const pool = createPool(postgres.databaseUrl, 4);
  return {
    dir,
    postgres,
    pool,
    env: envOf,
    close: async () => {
      await Child.killAll();
      await pool.end().catch(() => undefined);
      await postgres.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FaultStack {
  dir: string;
  temporal: FaultTemporal;
  postgres: FaultPostgres;
  client: Client;
  pool: Pool;
  taskQueue: string;
  /** The worker started with the stack (it applied the migrations). */
  firstWorker: WorkerProcess;
  /** Starts another `node dist/worker/main.js` on the task queue and resolves once it polls. */
  startWorker(): Promise<WorkerProcess>;
  /** Environment for the CLI and the worker: this stack's Temporal and PostgreSQL. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function startFaultStack(name: string): Promise<FaultStack> {
  const dir = workDir(name);
  const temporal = new FaultTemporal(join(dir, 'temporal.sqlite'), await freePort(), join(dir, 'temporal.log'));
  const postgres = new FaultPostgres(join(dir, 'postgres'), await freePort());
  const started = await Promise.allSettled([temporal.start(), postgres.start()]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await temporal.stop().catch(() => undefined);
    await postgres.stop().catch(() => undefined);
    throw failed.reason;
  }
  const taskQueue = `faults-${name}-${randomUUID().slice(0, 8)}`;
  const envOf = (extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
    cleanEnv({
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      DATABASE_URL: postgres.databaseUrl,
      LOG_LEVEL: 'info',
      ...extra,
    });

  const startWorker = async (): Promise<WorkerProcess> => {
    const worker = new WorkerProcess(
      spawn(process.execPath, [WORKER], { cwd: ROOT, env: envOf(), stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    // The worker bundles the workflow code at start: on a loaded two-core machine that takes a while.
    await worker.waitForOutput(/worker polling/, 'the worker to poll', 180_000);
    return worker;
  };
  // The worker applies the migrations; the first one is started before any table is used.
  let firstWorker: WorkerProcess;
  try {
    firstWorker = await startWorker();
  } catch (err) {
    await Child.killAll();
    await temporal.stop().catch(() => undefined);
    await postgres.stop().catch(() => undefined);
    throw err;
  }

  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const pool = createPool(postgres.databaseUrl, 4);
  return {
    dir,
    temporal,
    postgres,
    client,
    pool,
    taskQueue,
    env: envOf,
    firstWorker,
    startWorker,
    close: async () => {
      await Child.killAll();
      await connection.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await temporal.stop().catch(() => undefined);
      await postgres.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
