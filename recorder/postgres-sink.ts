/**
 * A recorder sink writing straight into the signal store (the crawler has DATABASE_URL).
 *
 * It owns the failure handling of its connections, so a database restart never crashes the crawler:
 * - given a connection string, it creates its own pool with timeouts (a frozen or overloaded server
 *   shows as an error the recorder retries, not a hang), TCP keep-alive, and an 'error' listener;
 * - given the crawler's own pg Pool, it attaches an 'error' listener (without one, an idle client losing
 *   its connection — "terminating connection due to administrator command" on a restart — is an
 *   unhandled 'error' event that exits the process) and leaves the pool's settings and ending to the
 *   crawler; the recorder's writeTimeoutMs still bounds a write.
 */
import pg from 'pg';
import { loadMinuteDays } from '../config/env';
import { createIngester } from '../db/signal-store/ingest';
import type { Pool } from '../db/pool';
import type { EventSink } from '@target-health/crawler/recorder/recorder';
import { defaultRecorderLogger, describeError, type RecorderLogger } from '@target-health/crawler/recorder/report';

export interface PostgresSinkConfig {
  /** postgres://user:password@host:5432/database (e.g. process.env.DATABASE_URL). */
  connectionString: string | undefined;
  /** Connections at most (6: the recorder's 4 writes in flight, and the classification lookups beside them). */
  max?: number;
  /** Server-side limit per statement (30 s): a statement stuck behind locks or an overloaded server fails and is retried. */
  statementTimeoutMs?: number;
  /** Limit for opening a connection, or for waiting for a free one (10 s). */
  connectionTimeoutMs?: number;
  /** Where connection errors are logged (a pino logger fits); default: pino on stderr. */
  logger?: RecorderLogger;
  /**
   * Days of minute rollups the deployment keeps: events older than that get no minute rows (as
   * `target-health retention` would drop them). Default: TARGET_HEALTH_MINUTE_DAYS, else 3.
   */
  minuteDays?: number;
}

export interface PostgresSink extends EventSink {
  /** The pool writes go through (the sink's own, or the one it was given). */
  readonly pool: Pool;
  /** Ends the pool if the sink created it; a pool it was given is the crawler's to end. */
  close(): Promise<void>;
}

/** Pools that already have our listener (a crawler may make several sinks on one pool). */
const guardedPools = new WeakSet<Pool>();

function isPool(x: unknown): x is Pool {
  return typeof x === 'object' && x !== null && typeof (x as Pool).connect === 'function' && typeof (x as Pool).query === 'function' && typeof (x as Pool).on === 'function';
}

/**
 * SQLSTATE classes that describe the data, not the server's state: retrying the same events cannot
 * succeed. 22 data exception (a value out of range), 23 integrity constraint, 54 program limit exceeded.
 * Everything else (connection errors, 57P01 admin shutdown, 57014 statement timeout, 53xxx out of
 * resources, 40xxx conflicts) is retried.
 */
const PERMANENT_SQLSTATE = /^(22|23|54)[0-9A-Z]{3}$/;

export function isPermanentPostgresError(err: unknown): boolean {
  // The ingester's own refusal of an event it cannot encode ("event 3: ts must be whole epoch milliseconds").
  if (err instanceof TypeError) return /^event \d+: /.test(err.message);
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  // 23505 (unique violation) is left to retry: repeats are the ingester's business, and a race of
  // concurrent DDL can raise it once.
  return typeof code === 'string' && code !== '23505' && PERMANENT_SQLSTATE.test(code);
}

/**
 * Logs a pool's connection errors, at most one line per 10 s (a restart hits every connection at once).
 * Both the pool (idle connections) and each connection (pg-pool takes its own listener off a connection
 * while it is lent out: one lost between two statements of a write, or still held by a write abandoned
 * after writeTimeoutMs, would otherwise be an unhandled 'error' event).
 */
function guard(pool: Pool, logger: () => RecorderLogger): void {
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  let lastLogAt = -Infinity;
  let unlogged = 0;
  // An idle connection's error reaches both listeners: count it once.
  const seen = new WeakSet<object>();
  const onError = (err: Error) => {
    if (typeof err === 'object' && err !== null) {
      if (seen.has(err)) return;
      seen.add(err);
    }
    // The broken connection is not reused (the pool drops it, or the write fails and releases it).
    unlogged += 1;
    if (Date.now() - lastLogAt < 10_000) return;
    lastLogAt = Date.now();
    logger().warn({ err: describeError(err), connections: unlogged }, `recorder: a database connection was lost (${describeError(err)}); writes reconnect and retry`);
    unlogged = 0;
  };
  pool.on('error', onError);
  pool.on('connect', (client) => {
    client.on('error', onError);
  });
}

function validConnectionString(config: PostgresSinkConfig): string {
  const url = config.connectionString;
  if (typeof url !== 'string' || url.trim() === '') {
    throw new Error('postgresSink: connectionString is empty; pass a PostgreSQL URL like postgres://user:password@host:5432/database (is DATABASE_URL set?)');
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new Error('postgresSink: connectionString must be a PostgreSQL URL like postgres://user:password@host:5432/database');
  }
  return url;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`postgresSink: ${name}: must be a whole number ≥ 1 (got ${String(value)})`);
  return value;
}

/** How long close() waits for connections still busy (a write abandoned on a frozen server) to finish. */
const END_WITHIN_MS = 10_000;

async function endWithin(pool: Pool, ms: number, log: () => RecorderLogger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
    timer.unref();
  });
  const outcome = await Promise.race([pool.end().then(() => 'ended' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') log().warn({}, `recorder: database connections still busy ${ms / 1000} s after close(); not waiting for them`);
}

/**
 * `postgresSink({ connectionString })`: the sink makes and owns its pool (the safe default).
 * `postgresSink(pool, { logger })`: writes through the crawler's pg Pool (see the module comment).
 */
export function postgresSink(poolOrConfig: Pool | PostgresSinkConfig, options: { logger?: RecorderLogger; minuteDays?: number } = {}): PostgresSink {
  const configured = !isPool(poolOrConfig) ? poolOrConfig : undefined;
  let logger = configured?.logger ?? options.logger;
  const log = (): RecorderLogger => (logger ??= defaultRecorderLogger());
  let pool: Pool;
  if (configured) {
    const connectionString = validConnectionString(configured);
    const statementTimeoutMs = positive('statementTimeoutMs', configured.statementTimeoutMs, 30_000);
    pool = new pg.Pool({
      connectionString,
      max: positive('max', configured.max, 6),
      connectionTimeoutMillis: positive('connectionTimeoutMs', configured.connectionTimeoutMs, 10_000),
      idleTimeoutMillis: 30_000,
      // A server that vanished without closing the connection (a host crash) is noticed by TCP.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      statement_timeout: statementTimeoutMs,
      // A frozen server cannot cancel anything: the client gives up 2 s after the server should have,
      // and the ingester drops that connection (it is not reused).
      query_timeout: statementTimeoutMs + 2_000,
      // A connection lost mid-transaction must not hold the store's locks on the server.
      idle_in_transaction_session_timeout: statementTimeoutMs * 2,
      application_name: 'target-health-recorder',
    });
  } else {
    pool = poolOrConfig as Pool;
  }
  guard(pool, log);
  const minuteDays = configured?.minuteDays ?? options.minuteDays ?? loadMinuteDays();
  if (!Number.isInteger(minuteDays) || minuteDays < 2) throw new Error(`postgresSink: minuteDays: must be a whole number of days ≥ 2 (got ${String(minuteDays)})`);
  const ingester = createIngester(pool, { minuteDays });
  let ended: Promise<void> | undefined;
  return {
    pool,
    write: ({ events, eventIds }) => ingester.ingest(events, 1, eventIds),
    isPermanentError: isPermanentPostgresError,
    close() {
      if (!configured) return Promise.resolve();
      ended ??= endWithin(pool, END_WITHIN_MS, log);
      return ended;
    },
  };
}
