/**
 * PostgreSQL connections. Connection failures are user errors (wrong DATABASE_URL, server down), so
 * they become one-line messages naming DATABASE_URL instead of stack traces.
 */
import pg from 'pg';
import { UserError } from '../common/user-error';

export type Pool = pg.Pool;

/** host:port/database of a URL, without credentials, for messages. */
export function describeDatabaseUrl(databaseUrl: string): string {
  const u = new URL(databaseUrl);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/** @param applicationName shown in pg_stat_activity (which process holds which connection); default: pg's. */
export function createPool(databaseUrl: string, max = 10, applicationName?: string): Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, ...(applicationName === undefined ? {} : { application_name: applicationName }) });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** Fails fast with an actionable message when the database cannot be reached. */
export async function checkDatabase(pool: Pool, databaseUrl: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    throw new UserError(
      `DATABASE_URL: cannot connect to PostgreSQL at ${describeDatabaseUrl(databaseUrl)} (${describePgError(err)}); check that the server is running and the URL is right`,
    );
  }
}

export function describePgError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err.message || (err instanceof AggregateError ? err.errors.map(String).join(', ') : '') || err.name;
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}
