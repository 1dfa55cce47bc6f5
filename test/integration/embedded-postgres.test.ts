/**
 * The embedded PostgreSQL's access, on real servers in folders of their own (docs/security.md): a fresh
 * data folder gets its own secret (owner-only) and SCRAM logins, the product logs in as a role that owns
 * its tables and is not a superuser, and the fixed credential of earlier versions is refused; a data
 * folder made by an earlier version (postgres/postgres, `password` or `md5` logins, tables owned by the
 * superuser) is taken over on its next start with nothing lost; a server of the data folder left running
 * by an earlier start is stopped before a new one starts, with one line saying so.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../stack/free-port';
import {
  PG_HBA,
  postgresBinary,
  postgresUserIds,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../../stack/embedded-postgres';
import { PRODUCT_ROLE, secretFileOf } from '../../stack/postgres-secret';
import { migrateInProcess as migrateUp } from '../kit/processes';
import { joinRegExp } from '../kit/regexp';

const execFileAsync = promisify(execFile);

let base: string;
const handles: EmbeddedPostgresHandle[] = [];
const leftovers: ChildProcess[] = [];

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'th-embedded-pg-'));
  // PostgreSQL runs as the `postgres` user when we are root: it must be able to enter this folder.
  chmodSync(base, 0o755);
});

afterAll(async () => {
  for (const h of handles) await h.stop();
  for (const child of leftovers) if (child.exitCode === null) child.kill('SIGINT');
  rmSync(base, { recursive: true, force: true });
});

/** The login's error code, or 'ok'. */
async function login(port: number, user: string, password: string, database = 'postgres'): Promise<string> {
  const client = new pg.Client({ host: '127.0.0.1', port, user, password, database });
  try {
    await client.connect();
    await client.end();
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A postmaster on `dataDir` started the way a leftover runs: not ours, in a process group of its own. */
async function rawPostmaster(dataDir: string, port: number): Promise<ChildProcess> {
  const ids = await postgresUserIds();
  const child = spawn(postgresBinary('postgres'), ['-D', dataDir, '-p', String(port)], {
    ...(ids ?? {}),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  leftovers.push(child);
  await new Promise<void>((ready, failed) => {
    let out = '';
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready to accept connections')) ready();
    });
    child.once('exit', (code) => failed(new Error(`postgres exited (${code}): ${out}`)));
  });
  return child;
}

/**
 * A data folder as earlier versions made it (embedded-postgres's initdb: superuser postgres/postgres,
 * `--auth=password` then; `md5` for a hand-edited one), the product's database migrated as that
 * superuser, one site recorded.
 */
async function earlierVersionFolder(dataDir: string, port: number, auth: 'password' | 'md5'): Promise<void> {
  const ids = await postgresUserIds();
  const pwDir = mkdtempSync(join(tmpdir(), 'th-legacy-pw-'));
  const pwFile = join(pwDir, 'pw');
  writeFileSync(pwFile, 'postgres\n');
  mkdirSync(dirname(dataDir), { mode: 0o755 });
  mkdirSync(dataDir, { mode: 0o700 });
  if (ids) for (const p of [dataDir, pwDir, pwFile]) chownSync(p, ids.uid, ids.gid);
  await execFileAsync(
    postgresBinary('initdb'),
    [`--pgdata=${dataDir}`, `--auth=${auth}`, '--username=postgres', `--pwfile=${pwFile}`, '--lc-messages=C'],
    { ...(ids ?? {}) },
  );
  rmSync(pwDir, { recursive: true, force: true });
  const server = await rawPostmaster(dataDir, port);
  const legacy = `postgres://postgres:postgres@127.0.0.1:${port}`;
  await query(`${legacy}/postgres`, 'CREATE DATABASE target_health');
  await migrateUp(`${legacy}/target_health`);
  await query(`${legacy}/target_health`, "INSERT INTO sites (site) VALUES ('kept.example.com')");
  server.kill('SIGINT');
  await new Promise((r) => server.once('exit', r));
}

/** What an attacker on the machine, and the product, would find: checked on every kind of folder. */
async function expectLockedDown(h: EmbeddedPostgresHandle, dataDir: string, port: number): Promise<void> {
  // The fixed credential of earlier versions is refused, for the superuser and for the product's role.
  expect(await login(port, 'postgres', 'postgres')).toBe('28P01');
  expect(await login(port, PRODUCT_ROLE, 'postgres', 'target_health')).toBe('28P01');
  // SCRAM only, and passwords stored as SCRAM verifiers.
  expect(readFileSync(join(dataDir, 'pg_hba.conf'), 'utf8')).toBe(PG_HBA);
  const stored = await query<{ rolname: string; scram: boolean }>(
    h.superuserUrl,
    "SELECT rolname, rolpassword LIKE 'SCRAM-SHA-256$%' AS scram FROM pg_authid WHERE rolname IN ('postgres', " +
      "'target_health') ORDER BY rolname",
  );
  expect(stored).toEqual([
    { rolname: 'postgres', scram: true },
    { rolname: 'target_health', scram: true },
  ]);
  expect(await query(h.superuserUrl, 'SHOW password_encryption')).toEqual([{ password_encryption: 'scram-sha-256' }]);

  // The product's role: no superuser, no role or database making; owns its database and everything in it.
  const url = new URL(h.databaseUrl);
  expect(decodeURIComponent(url.username)).toBe(PRODUCT_ROLE);
  expect(
    await query(
      h.databaseUrl,
      'SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = ' +
        'current_user',
    ),
  ).toEqual([
    { rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolreplication: false, rolbypassrls: false },
  ]);
  const notOwned = await query<{ name: string }>(
    h.databaseUrl,
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relowner <> current_user::regrole
     UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.proowner <> current_user::regrole
     UNION ALL SELECT datname FROM pg_database WHERE datname = current_database() AND datdba <> current_user::regrole`,
  );
  expect(notOwned).toEqual([]);
  // What the product does with it: migrations (nothing left), writes, a partition through the store's function.
  expect(await migrateUp(h.databaseUrl)).toEqual([]);
  await query(h.databaseUrl, "INSERT INTO sites (site) VALUES ('new.example.com') ON CONFLICT DO NOTHING");
  expect(
    await query(h.databaseUrl, "SELECT th_ensure_partition('request_events', '2031-05-06T07:00:00Z') AS p"),
  ).toEqual([{ p: 'request_events_p20310506' }]);

  // The secret: owner-only, and another local user cannot read it.
  const file = secretFileOf(dataDir);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(file).uid).toBe(userInfo().uid);
  const secret = JSON.parse(readFileSync(file, 'utf8')) as { superuser: string; product: string };
  expect(decodeURIComponent(url.password)).toBe(secret.product);
  expect(secret.superuser).not.toBe(secret.product);
  if (userInfo().uid === 0) {
    const nobody = {
      uid: Number((await execFileAsync('id', ['-u', 'nobody'])).stdout),
      gid: Number((await execFileAsync('id', ['-g', 'nobody'])).stdout),
    };
    const read = await execFileAsync('cat', [file], nobody).then(
      () => 'read',
      (err: { stderr: string }) => err.stderr,
    );
    expect(read).toMatch(/Permission denied/);
  }
}

test('a fresh data folder: its own secret, SCRAM only, the product as a role that owns its tables', async () => {
  const dataDir = join(base, 'fresh', 'postgres');
  const port = await freePort();
  const notices: string[] = [];
  const h = await startEmbeddedPostgres({ dataDir, port, persistent: true, log: { info: (m) => notices.push(m) } });
  handles.push(h);
  await migrateUp(h.databaseUrl);
  await expectLockedDown(h, dataDir, port);
  expect(notices).toEqual([]);
  // A restart keeps the secret: the same URLs log in.
  await h.stop();
  const again = await startEmbeddedPostgres({ dataDir, port, persistent: true });
  handles.push(again);
  expect(again.databaseUrl).toBe(h.databaseUrl);
  expect(await query(again.databaseUrl, "SELECT count(*)::int AS n FROM sites WHERE site = 'new.example.com'")).toEqual(
    [{ n: 1 }],
  );
});

test.each(['password', 'md5'] as const)(
  'a data folder of an earlier version (postgres/postgres, %s logins) is taken over on its next start, nothing lost',
  async (auth) => {
    const dataDir = join(base, `earlier-${auth}`, 'postgres');
    const port = await freePort();
    await earlierVersionFolder(dataDir, port, auth);
    const notices: string[] = [];
    const h = await startEmbeddedPostgres({ dataDir, port, persistent: true, log: { info: (m) => notices.push(m) } });
    handles.push(h);
    expect(notices).toEqual([
      expect.stringMatching(
        joinRegExp(
          /had the fixed password of earlier versions: /,
          /it now has its own secret .*SCRAM logins only.*connects as target_health/,
        ),
      ),
    ]);
    await expectLockedDown(h, dataDir, port);
    expect(await query(h.databaseUrl, "SELECT site FROM sites WHERE site = 'kept.example.com'")).toEqual([
      { site: 'kept.example.com' },
    ]);
  },
);

test(
  'a server of the data folder left running by an earlier start is stopped, said in one line, and the start goes ' +
    'on',
  async () => {
    const dataDir = join(base, 'leftover', 'postgres');
    const port = await freePort();
    const first = await startEmbeddedPostgres({ dataDir, port, persistent: true });
    await migrateUp(first.databaseUrl);
    await first.stop();
    // The server a killed start left behind: running on the folder, not this process's to watch.
    const leftover = await rawPostmaster(dataDir, port);
    const notices: string[] = [];
    const h = await startEmbeddedPostgres({ dataDir, port, persistent: true, log: { info: (m) => notices.push(m) } });
    handles.push(h);
    // Gone (its exit reported to us, its parent), and the new server has its port.
    await new Promise((gone) =>
      leftover.exitCode !== null || leftover.signalCode !== null ? gone(undefined) : leftover.once('exit', gone),
    );
    expect(notices).toEqual([
      `the embedded PostgreSQL of ${dataDir} is still running (pid ${leftover.pid}, port ${port}), left by an ` +
        `earlier start: stopping it (fast shutdown) and starting it anew`,
    ]);
    expect(await migrateUp(h.databaseUrl)).toEqual([]);
  },
);
