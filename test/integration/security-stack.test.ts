/**
 * `npm start`'s program on real processes, with an external DATABASE_URL whose password holds `:`, `/`,
 * `@`, `%` and `"` (a real PostgreSQL role: the stack's worker logs in with it) and the Temporal UI on a
 * port other than 8233 (docs/security.md): nothing it prints holds the password, the CLI settings file
 * does not copy the operator's DATABASE_URL, and the links — in the banner, in the CLI's output and in
 * the notifications the worker queues — all point at the UI it started, on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { noCanaryWarning } from '../../client/on-call/canary-hint';
import { listNotifications } from '../../server/db/notifications';
import { createPool, type Pool } from '../../server/db/pool';
import { freePort } from '../../stack/free-port';
import { CLI, cleanEnv, run, STACK, startUntil, waitForExit } from '../kit/processes';
import { env, eventually } from '../kit/services';

const CORE = randomBytes(8).toString('hex');
const PASSWORD = `St:${CORE}/p@ss%w"rd`;
const ROLE = `th_stack_${randomBytes(4).toString('hex')}`;

let admin: Pool;
let base: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  admin = createPool(env('DATABASE_URL'), 2);
  const client = await admin.connect();
  try {
    await client.query(`CREATE ROLE ${ROLE} LOGIN SUPERUSER PASSWORD ${client.escapeLiteral(PASSWORD)}`);
  } finally {
    client.release();
  }
  base = mkdtempSync(join(tmpdir(), 'th-sec-stack-'));
  chmodSync(base, 0o755);
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGINT');
  await admin.query(`REASSIGN OWNED BY ${ROLE} TO CURRENT_USER`);
  await admin.query(`DROP ROLE ${ROLE}`);
  await admin.end();
  rmSync(base, { recursive: true, force: true });
});

test('the banner masks the password; links use the UI that was started', async () => {
  const server = new URL(env('DATABASE_URL'));
  const databaseUrl = `postgres://${ROLE}:${encodeURIComponent(PASSWORD)}@${server.host}${server.pathname}`;
  const dataDir = join(base, 'data');
  const ports = { temporal: await freePort(), ui: await freePort() };
  const ui = `http://127.0.0.1:${ports.ui}`;
  const stack = await startUntil(
    STACK,
    cleanEnv({
      TARGET_HEALTH_DATA_DIR: dataDir,
      TEMPORAL_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'debug',
      XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
      TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
    }),
    /Watch a site:.*\n/,
    90_000,
  );
  child = stack.child;
  const banner = stack.output();
  expect(banner).toContain(`  Temporal UI:   ${ui}\n`);
  expect(banner).toContain(
    `  PostgreSQL:    DATABASE_URL=postgres://${ROLE}:***@${server.host}${server.pathname} (yours, from the ` +
      `environment)\n`,
  );
  // The JSON log line too. pino writes it asynchronously, so it may land after the banner: wait for it.
  const logLine = await eventually(
    () => Promise.resolve(/"database":"postgres:\/\/th_stack_[0-9a-f]+:[^"@]*@/.exec(stack.output())?.[0]),
    'the "running" log line',
    30_000,
  );
  expect(logLine).toMatch(/"database":"postgres:\/\/th_stack_[0-9a-f]+:\*\*\*@/);

  // The CLI settings file: owner-only, the UI and Temporal addresses, not the operator's database URL.
  const file = join(dataDir, 'cli.env');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const settings = readFileSync(file, 'utf8');
  expect(settings).toContain(`TEMPORAL_UI_URL=${ui}\n`);
  expect(settings).toContain(`TEMPORAL_ADDRESS=127.0.0.1:${ports.temporal}\n`);
  expect(settings).not.toContain('DATABASE_URL');

  const cliEnv = cleanEnv({
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    TEMPORAL_UI_URL: ui,
    DATABASE_URL: env('DATABASE_URL'),
  });
  const site = `ui-link-${randomBytes(4).toString('hex')}.example.com`;
  const started = await run(CLI, ['start', site, '--tick', '1s', '--owner', `owner@${site}`], cliEnv);
  // The only thing on stderr: the site has no canary yet (client/on-call/canary-hint.ts).
  expect(started.stderr).toBe(`target-health: ${noCanaryWarning(site)}\n`);
  expect(started.stdout).toContain(`${ui}/namespaces/default/workflows/site-health%3A${site}`);
  const paused = await run(CLI, ['decide', 'pause', site, '--who', 'sec@example.com', '--why', 'link check'], cliEnv);
  expect(paused.stderr).toBe('');
  // The worker `npm start` launched queued the notification with a link to the UI it started.
  const notification = await eventually(
    async () => (await listNotifications(admin, site)).find((n) => n.kind === 'paused'),
    'the paused notification',
  );
  expect((notification.payload as { link: string }).link).toBe(
    `${ui}/namespaces/default/workflows/site-health%3A${site}`,
  );
  // And to the site's page in the console the stack's API serves (its address is in the CLI settings), where
  // the review of the pause is a page too. Without a session the console sends the person to sign in.
  const apiUrl = /^TH_API=(.+)$/m.exec(settings)![1]!;
  expect(notification.payload).toMatchObject({
    consoleLink: `${apiUrl}/console/sites/${site}`,
    reviewLink: `${apiUrl}/console/sites/${site}/review`,
  });
  const opened = await fetch((notification.payload as { consoleLink: string }).consoleLink, { redirect: 'manual' });
  expect([opened.status, opened.headers.get('location')]).toEqual([303, '/console/sign-in']);

  stack.child.kill('SIGINT');
  expect(await waitForExit(stack.child)).toBe(0);
  const everything = stack.output();
  expect(everything.includes(CORE)).toBe(false);
  expect(everything.includes(encodeURIComponent(PASSWORD))).toBe(false);
});
