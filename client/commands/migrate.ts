/** `target-health migrate`: apply pending database migrations (the worker also does it at start). */
import type { Command } from 'commander';
import { loadDatabaseUrl } from '../../server/config/env';
import { migrateUp } from '../../server/db/migrate';
import { checkDatabase, createPool } from '../../server/db/pool';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations to DATABASE_URL')
    .action(async () => {
      const url = loadDatabaseUrl();
      const pool = createPool(url, 1);
      try {
        await checkDatabase(pool, url);
      } finally {
        await pool.end();
      }
      const applied = await migrateUp(url);
      process.stdout.write(applied.length > 0 ? `applied: ${applied.join(', ')}\n` : 'database schema is up to date\n');
    });
}
