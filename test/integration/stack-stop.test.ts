/**
 * How `npm start`'s program ends, on real processes (docs/operations.md, "Failure behaviour"):
 * - one Ctrl-C from a terminal — SIGINT to the whole process group — stops everything, in order (the
 *   worker drains, then the API, PostgreSQL and the dev server), exit code 0; no PostgreSQL restart;
 * - a `kill -9` of the stack: its PostgreSQL and dev server stop by themselves, and the next start — also
 *   one that comes while they are still stopping — resumes the loops with nothing lost, no manual step.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool } from '../../server/db/pool';
import { readCliSettings } from '../../stack/cli-settings';
import { freePort } from '../../stack/free-port';
import { CLI, cleanEnv, run, STACK, startUntil, waitForExit } from '../kit/processes';
import { eventually } from '../kit/services';

/** Processes whose command line names the data folder (the dev server's SQLite file, PostgreSQL's -D). */
function processesUsing(dir: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(dir) && !line.includes(' ps -eo'));
}

const READY = /Watch a site:.*\n/;
let base: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'th-stack-stop-'));
  chmodSync(base, 0o755);
});

afterAll(() => {
  // If an assertion failed midway, do not leave a stack running behind the test run.
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(-child.pid, 'SIGINT');
  rmSync(base, { recursive: true, force: true });
});

async function stackSettings(name: string): Promise<{ dataDir: string; env: NodeJS.ProcessEnv }> {
  const dataDir = join(base, name);
  const env = cleanEnv({
    TARGET_HEALTH_DATA_DIR: dataDir,
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    TARGET_HEALTH_PG_PORT: String(await freePort()),
    TH_API_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
  });
  return { dataDir, env };
}

/** Started as from a terminal: leading its own process group. */
async function startStack(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string }> {
  const stack = await startUntil(STACK, env, READY, 90_000, { detached: true });
  children.push(stack.child);
  return stack;
}

/** A terminal's Ctrl-C: SIGINT to every process of the group. Resolves with the exit code and how long it took. */
async function ctrlC(child: ChildProcess): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  process.kill(-child.pid!, 'SIGINT');
  const code = await waitForExit(child);
  return { code, ms: Date.now() - t0 };
}

test('one Ctrl-C to the process group stops everything in order, exit code 0', async () => {
  const { dataDir, env } = await stackSettings('ctrl-c');
  const stack = await startStack(env);
  const cliEnv = cleanEnv({ ...readCliSettings(dataDir) });
  const site = 'ctrl-c.example.com';
  expect((await run(CLI, ['start', site, '--tick', '1s'], cliEnv)).code).toBe(0);
  await eventually(
    async () =>
      (JSON.parse((await run(CLI, ['status', site, '--json'], cliEnv)).stdout) as { tick: number }).tick >= 1
        ? true
        : undefined,
    'a first tick',
    60_000,
  );

  // Neither PostgreSQL nor the dev server is in the stack's process group: a terminal's Ctrl-C cannot reach them.
  const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const devServer = Number(readFileSync(join(dataDir, 'temporal.pid'), 'utf8'));
  const groupOf = (pid: number): number =>
    Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  expect([groupOf(postmaster), groupOf(devServer)].filter((g) => g === stack.child.pid)).toEqual([]);

  const stopped = await ctrlC(stack.child);
  console.log(`one Ctrl-C: the stack exited ${stopped.code} after ${stopped.ms} ms`);
  expect(stopped.code).toBe(0);
  // The worker's drain is bounded (shutdownGraceTime 10 s, force 30 s); the rest takes a few seconds.
  expect(stopped.ms).toBeLessThan(45_000);
  expect(processesUsing(dataDir)).toEqual([]);
  const output = stack.output();
  // PostgreSQL did not get the terminal's SIGINT: it never "exited unexpectedly", nothing restarted it.
  expect(output).not.toMatch(/embedded PostgreSQL (exited unexpectedly|restarted)/);
  // Nor went down under the API or the worker: no connection of theirs was cut by its shutdown.
  expect(output).not.toContain('terminating connection due to administrator command');
  // In order: the worker drained (runWorker returned), then the API, PostgreSQL, the dev server.
  const at = (line: string): number => output.indexOf(`"msg":"${line}"`);
  const order = ['API stopped', 'PostgreSQL stopped', 'Temporal dev server stopped'].map(at);
  expect(order.every((i) => i > 0)).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
}, 300_000);

test(
  'kill -9 of the stack: its PostgreSQL and dev server stop by themselves; the next starts resume the loops, ' +
    'nothing lost',
  async () => {
    const { dataDir, env } = await stackSettings('kill-9');
    const first = await startStack(env);
    const cliEnv = cleanEnv({ ...readCliSettings(dataDir) });
    const site = 'kill-9.example.com';
    expect((await run(CLI, ['start', site, '--tick', '1s'], cliEnv)).code).toBe(0);
    const tickOf = async (): Promise<number> =>
      (JSON.parse((await run(CLI, ['status', site, '--json'], cliEnv)).stdout) as { tick: number }).tick;
    const ticksAfter = (n: number, what: string): Promise<number> =>
      eventually(
        async () => {
          const tick = await tickOf();
          return tick > n ? tick : undefined;
        },
        what,
        90_000,
      );
    const assessed = async (): Promise<number> => {
      const pool = createPool(cliEnv.DATABASE_URL!, 1);
      try {
        return Number(
          (await pool.query<{ n: string }>('SELECT count(*) AS n FROM assessments WHERE site = $1', [site])).rows[0]!.n,
        );
      } finally {
        await pool.end();
      }
    };
    const before = await ticksAfter(1, 'two ticks before the kill');
    const assessedBefore = await assessed();
    const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(processesUsing(dataDir).length).toBeGreaterThanOrEqual(2); // dev server + postgres

    // SIGKILL: no handler runs. The children notice by themselves (their parent-death signal) and stop.
    process.kill(first.child.pid!, 'SIGKILL');
    await waitForExit(first.child);
    await eventually(
      () => Promise.resolve(processesUsing(dataDir).length === 0 ? true : undefined),
      'no process of the killed stack left',
      30_000,
    );

    const second = await startStack(env);
    expect(second.output()).not.toMatch(/already in use/);
    const resumed = await ticksAfter(before, 'a tick after the restart');
    expect(resumed).toBeGreaterThan(before);
    expect(await assessed()).toBeGreaterThanOrEqual(assessedBefore);
    // The data folder's own server, started anew (a new postmaster), with the same data.
    expect(Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])).not.toBe(
      postmaster,
    );

    // Killed again and started at once, while its children may still be stopping: whatever is left of
    // them is stopped by the start (said in a line), which then runs as before.
    const third = { tick: await tickOf() };
    process.kill(second.child.pid!, 'SIGKILL');
    await waitForExit(second.child);
    const again = await startStack(env);
    expect(again.output()).not.toMatch(/already in use/);
    expect(await ticksAfter(third.tick, 'a tick after the immediate restart')).toBeGreaterThan(third.tick);
    expect(await assessed()).toBeGreaterThan(assessedBefore);

    const stopped = await ctrlC(again.child);
    expect(stopped.code).toBe(0);
    expect(processesUsing(dataDir)).toEqual([]);
  },
  600_000,
);
