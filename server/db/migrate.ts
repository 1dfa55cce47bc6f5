/**
 * Schema migrations: plain SQL files in server/db/migrations, applied in order by node-pg-migrate, which
 * records them in `pgmigrations` and serialises concurrent runs with an advisory lock: workers started
 * together on a new database wait for the first one's migrations (node-pg-migrate's default would fail
 * them), then find nothing to do. Applying is idempotent.
 */
import { runner } from 'node-pg-migrate';
import { MIGRATIONS_DIR } from '../config/paths';
import { UserError } from '../../core/common/user-error';
import { describeDatabaseUrl, describePgError } from './pool';

export interface MigrationLog {
  info(message: string): void;
}

/** Applies every pending migration; returns the names applied this time. */
export async function migrateUp(databaseUrl: string, log?: MigrationLog): Promise<string[]> {
  try {
    const applied = await runner({
      databaseUrl,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      checkOrder: true,
      singleTransaction: true,
      advisoryLockMode: 'wait',
      log: () => undefined,
    });
    const names = applied.map((m) => m.name);
    if (log) log.info(names.length > 0 ? `applied migrations: ${names.join(', ')}` : 'database schema is up to date');
    return names;
  } catch (err) {
    throw new UserError(
      `DATABASE_URL: cannot migrate the database at ${describeDatabaseUrl(databaseUrl)} (${describePgError(err)})`,
    );
  }
}
