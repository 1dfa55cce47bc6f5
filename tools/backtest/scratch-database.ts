/**
 * Scratch databases for a backtest, on the same PostgreSQL server as DATABASE_URL, so that scenarios are
 * ingested and replayed without touching the live data: the live database only ever sees
 * `CREATE DATABASE` / `DROP DATABASE` statements (run from a connection to it, as PostgreSQL requires),
 * never a write to one of its tables.
 *
 * One database is created and migrated with the project's migrations (server/db/migrate.ts) as a template;
 * each scenario then gets a copy of it (`CREATE DATABASE … TEMPLATE`, instant), so scenarios that share
 * a site name cannot see each other's traffic, and a scenario's gigabyte of raw events is dropped as
 * soon as it has been scored. Names: `th_backtest_<pid>_<random>` and `…_<n>` for the copies.
 *
 * Everything created is dropped by `dropAll()` (also after an error: callers use try/finally) and on
 * SIGINT/SIGTERM (`dropOnSignal`), unless the caller keeps it (`--keep`).
 */
import { randomBytes } from 'node:crypto';
import { UserError } from '../../core/common/user-error';
import { migrateUp } from '../../server/db/migrate';
import { createPool, describeDatabaseUrl, describePgError, type Pool } from '../../server/db/pool';

export interface ScratchDatabase {
  name: string;
  /** The URL of the scratch database (credentials as in DATABASE_URL). */
  url: string;
  pool: Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
  /** Closes the pool and leaves the database in place (`--keep`). */
  release(): Promise<void>;
}

export interface ScratchDatabases {
  /** The name every database of this run starts with. */
  readonly baseName: string;
  /** A new migrated database (a copy of the template). */
  create(): Promise<ScratchDatabase>;
  /**
   * Drops every database this run created and has not released (the template included). Calls queue
   * behind each other: a caller that awaits it knows every drop asked for so far is done.
   */
  dropAll(): Promise<void>;
  /**
   * Drops everything on SIGINT/SIGTERM (the work still running then fails on its lost connections and
   * should end with `interruptedBy`). Returns the function that removes the handlers again.
   */
  dropOnSignal(): () => void;
  /** The signal that made the databases go, if one did. */
  readonly interruptedBy: NodeJS.Signals | undefined;
}

/** A database name PostgreSQL takes unquoted: lower-case letters, digits and underscores. */
function scratchBaseName(): string {
  return `th_backtest_${process.pid}_${randomBytes(4).toString('hex')}`;
}

function urlFor(databaseUrl: string, name: string): string {
  const u = new URL(databaseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(databaseUrl: string, work: (pool: Pool) => Promise<T>): Promise<T> {
  const pool = createPool(databaseUrl, 1);
  try {
    return await work(pool);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

export async function createScratchDatabases(databaseUrl: string): Promise<ScratchDatabases> {
  const baseName = scratchBaseName();
  const template = `${baseName}_template`;
  /** Created and not yet dropped or released, with their open pools. */
  const live = new Map<string, Pool | null>();
  let count = 0;

  const dropNamed = async (names: string[]): Promise<void> => {
    if (names.length === 0) return;
    await admin(databaseUrl, async (pool) => {
      // WITH (FORCE): ingest workers may still hold connections after an interrupted run.
      for (const name of names) await pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  };

  try {
    await admin(databaseUrl, (pool) => pool.query(`CREATE DATABASE ${template}`));
  } catch (err) {
    throw new UserError(
      `DATABASE_URL: cannot create a scratch database on PostgreSQL at ${describeDatabaseUrl(databaseUrl)} ` +
        `(${describePgError(err)}); ` +
        ('the backtest needs a user allowed to create databases (CREATEDB), or DATABASE_URL unset to run on a ' +
          'private temporary PostgreSQL'),
    );
  }
  live.set(template, null);
  try {
    await migrateUp(urlFor(databaseUrl, template));
  } catch (err) {
    await dropNamed([template]).catch(() => undefined);
    throw err;
  }

  let dropping: Promise<void> = Promise.resolve();
  let interruptedBy: NodeJS.Signals | undefined;
  const dropLive = async (): Promise<void> => {
    const entries = [...live.entries()];
    live.clear();
    for (const [, pool] of entries) await pool?.end().catch(() => undefined);
    await dropNamed(entries.map(([name]) => name));
  };
  const dropAll = (): Promise<void> => {
    dropping = dropping.then(dropLive, dropLive);
    return dropping;
  };

  return {
    baseName,
    get interruptedBy() {
      return interruptedBy;
    },
    async create() {
      count += 1;
      const name = `${baseName}_${count}`;
      await admin(databaseUrl, (pool) => pool.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
      const url = urlFor(databaseUrl, name);
      const pool = createPool(url, 4);
      live.set(name, pool);
      return {
        name,
        url,
        pool,
        async drop() {
          if (!live.has(name)) return;
          live.delete(name);
          await pool.end().catch(() => undefined);
          await dropNamed([name]);
        },
        async release() {
          if (!live.has(name)) return;
          live.delete(name);
          await pool.end().catch(() => undefined);
        },
      };
    },
    dropAll,
    dropOnSignal() {
      const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
        const handler = (): void => {
          interruptedBy = signal;
          process.stderr.write(`backtest: ${signal}: dropping the scratch databases ${baseName}_*\n`);
          void dropAll().catch(() => undefined);
        };
        process.once(signal, handler);
        return () => process.removeListener(signal, handler);
      });
      return () => handlers.forEach((remove) => remove());
    },
  };
}
