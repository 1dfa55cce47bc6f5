/**
 * `npm start`'s program on real processes: it brings up the dev server, PostgreSQL, migrations, the
 * worker and the API; Ctrl-C (SIGINT) stops every process it started; the next start finds the same data and the
 * same running site loop.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, chmodSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool } from '../../server/db/pool';
import { readCliSettings } from '../../stack/cli-settings';
import { freePort } from '../../stack/free-port';
import { noCanaryWarning } from '../../client/on-call/canary-hint';
import { isExecutable } from '../../stack/temporal-cli';
import { RUNNING_SITES_QUERY } from '../../loop/list-queries';
import { CLI, cleanEnv, run, STACK, startUntil, waitForExit } from '../kit/processes';
import { eventually } from '../kit/services';

function processesUsing(dir: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(dir) && !line.includes(' ps -eo'));
}

let dataDir: string;
const children: ChildProcess[] = [];
afterAll(() => {
  // If an assertion failed midway, do not leave a stack running behind the test run.
  for (const child of children) if (child.exitCode === null) child.kill('SIGINT');
  rmSync(dataDir, { recursive: true, force: true });
});

// Two stack starts, a PostgreSQL restart and the ticks between them, each wait bounded (90 + 60 + 90 +
// 120 + 60 s …): the project's 120 s default undercut them; measured 95 s at a load of 13.
test('start, Ctrl-C leaves nothing running, restart finds the same data', async () => {
  const base = mkdtempSync(join(tmpdir(), 'th-stack-'));
  chmodSync(base, 0o755);
  dataDir = join(base, 'data');
  const ports = { temporal: await freePort(), ui: await freePort(), pg: await freePort(), api: await freePort() };
  const stackEnv = cleanEnv({
    TARGET_HEALTH_DATA_DIR: dataDir,
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    TARGET_HEALTH_PG_PORT: String(ports.pg),
    TH_API_PORT: String(ports.api),
    LOG_LEVEL: 'info',
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
  });
  const ready = /Target Health is running/;

  const first = await startUntil(STACK, stackEnv, ready, 90_000);
  children.push(first.child);
  expect(first.output()).toMatch(/applied migrations: 001_sites_and_assessments/);
  // The UI is up on its port.
  const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
  expect(ui.status).toBe(200);
  // The banner masks the embedded database's password; the full URL is in the owner-only cli.env (docs/security.md).
  const banner = await eventually(
    () => Promise.resolve(/Watch a site:.*\n/.test(first.output()) ? first.output() : undefined),
    'the banner',
  );
  // The product's role (not the superuser) with the data folder's own secret
  // (test/integration/embedded-postgres.test.ts).
  expect(banner).toContain(`DATABASE_URL=postgres://target_health:***@127.0.0.1:${ports.pg}/target_health`);
  const secret = JSON.parse(readFileSync(join(dataDir, 'postgres.secret'), 'utf8')) as {
    superuser: string;
    product: string;
  };
  const cliEnv = cleanEnv({
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    DATABASE_URL: `postgres://target_health:${secret.product}@127.0.0.1:${ports.pg}/target_health`,
  });
  expect(readFileSync(join(dataDir, 'cli.env'), 'utf8')).toContain(`DATABASE_URL=${cliEnv.DATABASE_URL}\n`);
  // The API answers beside the others, its URL in the banner with how to get a first token.
  const apiUrl = `http://127.0.0.1:${ports.api}`;
  // cli.env gives the API's URL too, for crawlers and curl started from another terminal.
  expect(readCliSettings(dataDir)?.TH_API).toBe(apiUrl);
  expect(banner).toContain(`API:           ${apiUrl} (OpenAPI: ${apiUrl}/openapi.json)`);
  expect(banner).toMatch(/First token: .*npx target-health token create me --scope admin/);
  expect(await (await fetch(`${apiUrl}/healthz`)).json()).toEqual({ ok: true });
  const readiness = await fetch(`${apiUrl}/readyz`);
  expect({ status: readiness.status, body: await readiness.json() }).toEqual({
    status: 200,
    body: {
      ready: true,
      checks: [
        { name: 'postgres', ok: true },
        { name: 'temporal', ok: true },
      ],
    },
  });
  // The token it suggests works against the stack's database, and /metrics accepts it.
  const created = await run(CLI, ['token', 'create', 'me', '--scope', 'admin'], cliEnv);
  expect(created.code).toBe(0);
  const token = created.stdout.trim();
  expect((await fetch(`${apiUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  // Nothing secret in what the stack printed: neither the token nor the database passwords.
  for (const value of [token, secret.product, secret.superuser]) expect(first.output()).not.toContain(value);

  const started = await run(CLI, ['start', 'stack-test.example.com', '--tick', '1s'], cliEnv);
  // The only thing on stderr: the site has no canary yet (client/on-call/canary-hint.ts).
  expect(started.stderr).toBe(`target-health: ${noCanaryWarning('stack-test.example.com')}\n`);
  expect(started.stdout).toContain('started site-health:stack-test.example.com');
  const tickOf = async (): Promise<number> =>
    (JSON.parse((await run(CLI, ['status', 'stack-test.example.com', '--json'], cliEnv)).stdout) as { tick: number })
      .tick;
  const before = {
    tick: await eventually(
      async () => {
        const tick = await tickOf();
        return tick >= 2 ? tick : undefined;
      },
      'two ticks before the restart',
      60_000,
    ),
  };
  expect(before.tick).toBeGreaterThanOrEqual(2);
  // The banner names the Temporal CLI it provisioned, and its "List sites" line — the pass-through
  // form with the settings of cli.env — lists the loop just started.
  const cliLine =
    /\n {2}Temporal CLI: {2}(\S+) \((?:TEMPORAL_CLI_PATH|PATH|cache|go install)\); or `npx target-health temporal …`/;
  const cliPath = cliLine.exec(banner)?.[1];
  expect(cliPath !== undefined && isExecutable(cliPath)).toBe(true);
  const listSites =
    /\n {2}List sites: {4}set -a; \. (\S+); set \+a; npx target-health temporal workflow list --query "([^"]+)"\n/.exec(
      banner,
    );
  expect(listSites?.slice(1)).toEqual([join(dataDir, 'cli.env'), RUNNING_SITES_QUERY]);
  const sourced = cleanEnv({
    ...Object.fromEntries(
      readFileSync(join(dataDir, 'cli.env'), 'utf8')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    ),
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
  });
  const listed = await run(CLI, ['temporal', 'workflow', 'list', '--query', RUNNING_SITES_QUERY], sourced);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain('site-health:stack-test.example.com');

  expect(processesUsing(dataDir).length).toBeGreaterThanOrEqual(2); // dev server + postgres
  first.child.kill('SIGINT');
  expect(await waitForExit(first.child)).toBe(0);
  expect(processesUsing(dataDir)).toEqual([]);
  // The API stopped with it: its port is closed.
  await expect(fetch(`${apiUrl}/healthz`)).rejects.toThrow();

  // Restarted from the terminal that followed the banner's advice (`set -a; . data/cli.env; set +a`): the
  // exported settings are the stopped stack's own, so the embedded services start again (not "external").
  const exported = readCliSettings(dataDir)!;
  expect(Object.keys(exported)).toEqual(['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'DATABASE_URL', 'TH_API']);
  const second = await startUntil(STACK, { ...stackEnv, ...exported }, ready, 90_000);
  children.push(second.child);
  expect(second.output()).toMatch(/database schema is up to date/);
  expect(second.output()).toContain(
    "TEMPORAL_ADDRESS, TEMPORAL_UI_URL, DATABASE_URL, TH_API in the environment are this stack's own",
  );
  expect(second.output()).not.toContain('(yours, from the environment)');
  // The same workflow carries on from where it was: ticks keep counting, not restarted at 1.
  const after = {
    tick: await eventually(
      async () => {
        const tick = await tickOf();
        return tick > before.tick ? tick : undefined;
      },
      'a tick after the restart',
      60_000,
    ),
  };
  expect(after.tick).toBeGreaterThan(before.tick);
  // And PostgreSQL kept the first run's rows.
  const pool = createPool(cliEnv.DATABASE_URL!, 1);
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM assessments WHERE site = 'stack-test.example.com'",
  );
  await pool.end();
  expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(after.tick - 1);

  // PostgreSQL killed under the running stack is restarted, and the loop's ticks carry on.
  const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const beforeKill = await tickOf();
  process.kill(postmaster, 'SIGKILL');
  await eventually(
    () => Promise.resolve(/embedded PostgreSQL restarted/.test(second.output()) ? true : undefined),
    'PostgreSQL restarted by the stack',
    120_000,
  );
  expect(second.output()).toMatch(/embedded PostgreSQL exited unexpectedly/);
  await eventually(
    async () => ((await tickOf()) > beforeKill + 1 ? true : undefined),
    'ticks after the restart',
    60_000,
  );
  expect(second.child.exitCode).toBeNull();
  second.child.kill('SIGINT');
  expect(await waitForExit(second.child)).toBe(0);
  expect(processesUsing(dataDir)).toEqual([]);
}, 600_000);
