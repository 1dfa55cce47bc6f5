/**
 * PostgreSQL connections. Connection failures are user errors (wrong DATABASE_URL, server down), so
 * they become one-line messages naming DATABASE_URL instead of stack traces.
 */
import pg from 'pg';
import { UserError } from '../../core/common/user-error';

export type Pool = pg.Pool;

/** host:port/database of a URL, without credentials, for messages. */
export function describeDatabaseUrl(databaseUrl: string): string {
  const u = new URL(databaseUrl);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/**
 * How long a pool waits for PostgreSQL: for a connection (a new one, or a free one of the pool), and for
 * a statement's answer. `statementMs` is the server's own limit (a lock, a slow disk: it cancels the
 * statement and the connection stays usable); the client gives up a second later, for a server that
 * cannot cancel anything (frozen, or unreachable with the connection still open).
 */
export interface PoolTimeouts {
  connectMs: number;
  statementMs: number;
}

/**
 * How long a new connection may take by default: a PostgreSQL busy with a bulk ingest on a small machine
 * can take seconds to start a backend and check a SCRAM password, and 5 s ran out on a 2-core machine
 * with a back-fill, a benchmark and the test suite on it — a query failed with "timeout exceeded when
 * trying to connect" though the server was up. 10 s, as the ingest workers already allowed.
 */
export const DEFAULT_CONNECT_MS = 10_000;

/** Client-side limit for a statement: a little over the server's own, so a live server's cancel wins. */
export const queryTimeoutMs = (timeouts: PoolTimeouts): number => timeouts.statementMs + 1_000;

/**
 * @param applicationName shown in pg_stat_activity (which process holds which connection); default: pg's.
 * @param timeouts statement limits (default: none, only the connection limit of {@link DEFAULT_CONNECT_MS}):
 * for processes that must answer in bounded time whatever the database does (the API: server/api/start-api.ts).
 */
export function createPool(databaseUrl: string, max = 10, applicationName?: string, timeouts?: PoolTimeouts): Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    connectionTimeoutMillis: timeouts?.connectMs ?? DEFAULT_CONNECT_MS,
    idleTimeoutMillis: 30_000,
    // TCP keepalive: a connection whose peer vanished (a network cut) is found dead instead of waited on.
    keepAlive: true,
    ...(timeouts === undefined
      ? {}
      : { statement_timeout: timeouts.statementMs, query_timeout: queryTimeoutMs(timeouts) }),
    ...(applicationName === undefined ? {} : { application_name: applicationName }),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor one checked out for a transaction: the pool stops listening while a client is out, so a connection
  // ended between two of its queries (PostgreSQL shut down) would be an 'error' event nobody hears. The
  // next query on that client fails instead ("Client has encountered a connection error"), the caller
  // retries as for any lost connection, and the pool drops the client when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Fails fast with an actionable message when the database cannot be reached. */
export async function checkDatabase(pool: Pool, databaseUrl: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    throw new UserError(
      `DATABASE_URL: cannot connect to PostgreSQL at ${describeDatabaseUrl(databaseUrl)} ` +
        `(${describePgError(err)}); check that the server is running and the URL is right`,
    );
  }
}

/**
 * SQLSTATEs of a server that cannot serve now: 08 connection, 53 resources, 57014 cancelled (statement timeout), 57P0x
 * shutting down or starting.
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57014|57P0[1-5])$/;
/** Node's errors for a server that cannot be reached. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** node-postgres's and pg-pool's own words for a lost, refused or timed-out connection or statement. */
const PG_UNAVAILABLE_MESSAGES = [
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error',
  'Client was closed',
];
/** A message that starts with one of them. */
const PG_UNAVAILABLE_MESSAGE = new RegExp(`^(${PG_UNAVAILABLE_MESSAGES.join('|')})`);

/**
 * Whether an error says PostgreSQL did not answer or is not available (rather than refusing the
 * request itself): what a caller answers with "try again later" (the API's 503 `store_unavailable`).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNREACHABLE.has(code))) return true;
  if (err instanceof AggregateError && err.errors.length > 0 && err.errors.every(isDatabaseUnavailable)) return true;
  return PG_UNAVAILABLE_MESSAGE.test(err.message);
}

export function describePgError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err.message || (err instanceof AggregateError ? err.errors.map(String).join(', ') : '') || err.name;
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}
