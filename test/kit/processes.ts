/** Runs the compiled entry points (`npm test` builds dist/ first) as real child processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const CLI = join(ROOT, 'client', 'bin', 'target-health.js');
export const WORKER = join(ROOT, 'dist', 'worker', 'main.js');
export const STACK = join(ROOT, 'dist', 'client', 'start.js');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment without the test services' settings, plus `extra`: each case says what it sets. */
export function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_FORMAT: 'json' };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function run(script: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A process may exit before it has read all its input (a run that gives up exits 3 mid-stream): the
    // rest of the input then meets a closed pipe, as it would from a shell; its exit code tells the story.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(input ?? '');
  });
}

/**
 * Starts a long-running process and resolves once `ready` appears in its output. `detached`: it leads a
 * process group of its own, as a program started from a terminal does (the terminal's Ctrl-C goes to the
 * whole group: `process.kill(-child.pid, 'SIGINT')`).
 */
export function startUntil(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs: number,
  options: { detached?: boolean } = {},
): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      env,
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached === true,
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      reject(new Error(`not ready within ${timeoutMs} ms; output:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready; output:\n${out}`));
    });
  });
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

const MIGRATE_MODULE = join(ROOT, 'dist', 'server', 'db', 'migrate.js');
const MIGRATE = `require(${JSON.stringify(MIGRATE_MODULE)}).migrateUp(process.env.DATABASE_URL).then(
  (names) => process.stdout.write(JSON.stringify(names)),
  (err) => { process.stderr.write(err.message); process.exit(3); },
);`;

/**
 * migrateUp() in a process of its own, as a worker runs it (node-pg-migrate is an ES module: it runs from dist/, which
 * `npm test` builds first).
 */
export async function migrateInProcess(databaseUrl: string): Promise<string[]> {
  const done = await run('-e', [MIGRATE], cleanEnv({ DATABASE_URL: databaseUrl }));
  if (done.code !== 0) throw new Error(`migrateUp failed (exit ${done.code}): ${done.stderr}`);
  return JSON.parse(done.stdout) as string[];
}
