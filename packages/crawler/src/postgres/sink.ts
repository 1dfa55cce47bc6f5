/**
 * A recorder sink for a crawler that has the database's address rather than an API token: each batch is
 * validated here (the package's event schema, so refused events reach `onRejected` at once, with the
 * store's messages) and written as ONE row of the server's inbox (`event_inbox`, contract.ts): gzipped
 * NDJSON, each event with its id. The server's drainer feeds the rows to the store's ingester (classification, rollups,
 * norms) and deletes them. No store code and no rights on the store's tables here.
 *
 * - Idempotent: a row's key is a hash of its events' ids, and the INSERT is `ON CONFLICT DO NOTHING`, so a
 *   batch resent after a timeout (the first INSERT may have committed) is one row; the ingester ignores
 *   repeated event ids besides, so a batch split differently on a retry is stored once too.
 * - One round trip per row: an autocommit INSERT; the inbox's trigger NOTIFYs the drainer in the same
 *   transaction. A batch larger than `maxRowBytes` is written as several rows (each its own key).
 * - Failure handling of the connections, so a database restart never crashes the crawler:
 *   given a connection string it creates its own pool with timeouts (a frozen or overloaded server shows as
 *   an error the recorder retries, not a hang), TCP keep-alive and an 'error' listener; given the crawler's
 *   own pg Pool it attaches an 'error' listener and leaves the pool's settings and ending to the crawler
 *   (the recorder's writeTimeoutMs still bounds a write).
 *
 * What "stored" means here: in the inbox, durably (the events reach the store's tables within a second or
 * so while the server runs, and are kept in the inbox while it does not). Refusals only the server can
 * make (the store's time horizon, data PostgreSQL refuses) are logged and counted by the server.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type * as Pg from 'pg';
import { parseEvent } from '../events/event';
import { fastParseEvent } from '../events/fast-parse';
import type { EventSink, RecordedBatch } from '../recorder/recorder';
import { defaultRecorderLogger, describeError, type RecorderLogger } from '../recorder/report';
import type { IngestResult, RejectedLine } from '../recorder/types';
import { BATCH_ID_PREFIX, INBOX_TABLE } from './contract';
import { loadPg } from './load-pg';

export interface PostgresSinkConfig {
  /** postgres://user:password@host:5432/database (e.g. process.env.DATABASE_URL). */
  connectionString: string | undefined;
  /** Connections at most (4: the recorder's writes in flight, `maxConcurrentWrites`). */
  max?: number;
  /**
   * Server-side limit per statement (30 s): a statement stuck behind locks or an
   * overloaded server fails and is retried.
   */
  statementTimeoutMs?: number;
  /** Limit for opening a connection, or for waiting for a free one (10 s). */
  connectionTimeoutMs?: number;
  /** Where connection errors are logged (a pino logger fits); default: JSON lines on stderr. */
  logger?: RecorderLogger;
  /** Bytes of NDJSON per inbox row at most, before compression (16 MiB); a larger batch is written as several rows. */
  maxRowBytes?: number;
}

export interface PostgresSinkOptions {
  logger?: RecorderLogger;
  maxRowBytes?: number;
}

export interface PostgresSink extends EventSink {
  /** The pool writes go through (the sink's own, or the one it was given). */
  readonly pool: Pg.Pool;
  /** Ends the pool if the sink created it; a pool it was given is the crawler's to end. */
  close(): Promise<void>;
}

/** Pools that already have our listener (a crawler may make several sinks on one pool). */
const guardedPools = new WeakSet<Pg.Pool>();

function isPool(x: unknown): x is Pg.Pool {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as Pg.Pool).connect === 'function' &&
    typeof (x as Pg.Pool).query === 'function' &&
    typeof (x as Pg.Pool).on === 'function'
  );
}

/**
 * SQLSTATE classes that describe the data, not the server's state: retrying the same rows cannot succeed.
 * 22 data exception, 23 integrity constraint (the inbox's CHECKs), 54 program limit exceeded. Everything
 * else (connection errors, 57P01 admin shutdown, 57014 statement timeout, 53xxx out of resources, 42501 a
 * missing grant — nothing is lost while someone fixes it) is retried.
 */
const PERMANENT_SQLSTATE = /^(22|23|54)[0-9A-Z]{3}$/;

export function isPermanentPostgresError(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  // 23505 (unique violation) cannot come from ON CONFLICT DO NOTHING; left to retry all the same.
  return typeof code === 'string' && code !== '23505' && PERMANENT_SQLSTATE.test(code);
}

/**
 * Logs a pool's connection errors, at most one line per 10 s (a restart hits every connection at once).
 * Both the pool (idle connections) and each connection (pg-pool takes its own listener off a connection
 * while it is lent out: one lost mid-write, or still held by a write abandoned after writeTimeoutMs, would
 * otherwise be an unhandled 'error' event that ends the crawler's process).
 */
function guard(pool: Pg.Pool, logger: () => RecorderLogger): void {
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
    unlogged += 1;
    if (Date.now() - lastLogAt < 10_000) return;
    lastLogAt = Date.now();
    logger().warn(
      { err: describeError(err), connections: unlogged },
      `recorder: a database connection was lost (${describeError(err)}); writes reconnect and retry`,
    );
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
    throw new Error(
      'postgresSink: connectionString is empty; pass a PostgreSQL URL like ' +
        'postgres://user:password@host:5432/database (is DATABASE_URL set?)',
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new Error(
      'postgresSink: connectionString must be a PostgreSQL URL like postgres://user:password@host:5432/database',
    );
  }
  return url;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`postgresSink: ${name}: must be a whole number ≥ 1 (got ${String(value)})`);
  return value;
}

/** How long close() waits for connections still busy (a write abandoned on a frozen server) to finish. */
const END_WITHIN_MS = 10_000;

async function endWithin(pool: Pg.Pool, ms: number, log: () => RecorderLogger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
    timer.unref();
  });
  const outcome = await Promise.race([pool.end().then(() => 'ended' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late')
    log().warn({}, `recorder: database connections still busy ${ms / 1000} s after close(); not waiting for them`);
}

/** One inbox row: NDJSON lines, and its key. */
interface Row {
  lines: string[];
  ids: string[];
  bytes: number;
}

/** The crawler's event loop gets a turn every 256 events of a batch being validated and written out. */
const YIELD_EVERY_MASK = 255;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

const gzip = promisify(gzipCallback);

const INSERT_SQL =
  `INSERT INTO ${INBOX_TABLE} (batch_id, events, event_count) VALUES ($1, $2, $3) ON CONFLICT DO ` + `NOTHING`;

/** The row's key: the same events (by id, in the same order) are the same row, whoever sends them when. */
export function inboxBatchId(ids: readonly string[]): string {
  const hash = createHash('sha256');
  for (const id of ids) hash.update(id).update('\n');
  return `${BATCH_ID_PREFIX}${hash.digest('hex')}`;
}

/**
 * The event as one NDJSON line with its id (the event's own, else the recorder's), or why it is refused:
 * the package's schema (the store's rules for each field) and JSON itself (a BigInt, a cycle).
 */
function lineOf(event: Record<string, unknown>, id: string): { line: string } | { errors: string[] } {
  // The fast path answers as the schema would, or not at all (then the schema decides and words the errors).
  if (fastParseEvent(event) === undefined) {
    const parsed = parseEvent(event);
    if (!parsed.ok) return { errors: parsed.errors };
  }
  let json: string;
  try {
    json = JSON.stringify(event);
  } catch (err) {
    return {
      errors: [`event: cannot be written as JSON (${describeError(err)}); send plain values (no BigInt, no cycles)`],
    };
  }
  if (event.eventId !== undefined) return { line: json };
  const idField = `"eventId":${JSON.stringify(id)}`;
  return { line: json === '{}' ? `{${idField}}` : `{${idField},${json.slice(1)}` };
}

/**
 * `postgresSink({ connectionString })`: the sink makes and owns its pool (the safe default).
 * `postgresSink(pool, { logger })`: writes through the crawler's pg Pool (see the module comment).
 */
export function postgresSink(
  poolOrConfig: Pg.Pool | PostgresSinkConfig,
  options: PostgresSinkOptions = {},
): PostgresSink {
  const configured = !isPool(poolOrConfig) ? poolOrConfig : undefined;
  if (!configured && (typeof poolOrConfig !== 'object' || poolOrConfig === null))
    throw new Error('postgresSink: pass { connectionString } or a pg Pool');
  let logger = configured?.logger ?? options.logger;
  const log = (): RecorderLogger => (logger ??= defaultRecorderLogger());
  const maxRowBytes = positive('maxRowBytes', configured?.maxRowBytes ?? options.maxRowBytes, 16 * 1024 * 1024);
  let pool: Pg.Pool;
  if (configured) {
    const connectionString = validConnectionString(configured);
    const statementTimeoutMs = positive('statementTimeoutMs', configured.statementTimeoutMs, 30_000);
    const pg = loadPg('postgresSink');
    pool = new pg.Pool({
      connectionString,
      max: positive('max', configured.max, 4),
      connectionTimeoutMillis: positive('connectionTimeoutMs', configured.connectionTimeoutMs, 10_000),
      idleTimeoutMillis: 30_000,
      // A server that vanished without closing the connection (a host crash) is noticed by TCP.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      statement_timeout: statementTimeoutMs,
      // A frozen server cannot cancel anything: the client gives up 2 s after the server should have.
      query_timeout: statementTimeoutMs + 2_000,
      idle_in_transaction_session_timeout: statementTimeoutMs * 2,
      application_name: 'target-health-recorder',
    });
  } else {
    pool = poolOrConfig as Pg.Pool;
  }
  guard(pool, log);
  let ended: Promise<void> | undefined;

  async function insert(row: Row): Promise<boolean> {
    // Level 1: ~7× smaller for ~3 µs an event, on libuv's threads (not the crawler's event loop); the
    // server's PostgreSQL is spared most of a batch's bytes (contract.ts, migration 010).
    const payload = await gzip(Buffer.from(`${row.lines.join('\n')}\n`), { level: 1 });
    const result = await pool.query(INSERT_SQL, [inboxBatchId(row.ids), payload, row.lines.length]);
    return result.rowCount === 1;
  }

  return {
    pool,
    async write({ events, eventIds }: RecordedBatch): Promise<IngestResult> {
      const rejected: RejectedLine[] = [];
      const rows: Row[] = [];
      let row: Row = { lines: [], ids: [], bytes: 0 };
      for (let i = 0; i < events.length; i++) {
        // ~2 µs an event: a batch of 5,000 would hold the crawler's event loop for 10 ms and more.
        if ((i & YIELD_EVERY_MASK) === YIELD_EVERY_MASK) await yieldToLoop();
        const id = eventIds[i]!;
        const made = lineOf(events[i]!, id);
        if ('errors' in made) {
          rejected.push({ line: i + 1, errors: made.errors });
          continue;
        }
        const bytes = Buffer.byteLength(made.line) + 1;
        if (row.lines.length > 0 && row.bytes + bytes > maxRowBytes) {
          rows.push(row);
          row = { lines: [], ids: [], bytes: 0 };
        }
        row.lines.push(made.line);
        // The id the event is stored under (its own eventId, else the recorder's: RecordedBatch).
        row.ids.push(id);
        row.bytes += bytes;
      }
      if (row.lines.length > 0) rows.push(row);
      const result: IngestResult = { accepted: 0, inserted: 0, duplicates: 0, rejected };
      // One row after another: a failure leaves later rows unwritten, and the resent batch finds the
      // written ones already there (same keys), counted as duplicates.
      for (const r of rows) {
        const fresh = await insert(r);
        result.accepted += r.lines.length;
        if (fresh) result.inserted += r.lines.length;
        else result.duplicates += r.lines.length;
      }
      return result;
    },
    isPermanentError: isPermanentPostgresError,
    close() {
      if (!configured) return Promise.resolve();
      ended ??= endWithin(pool, END_WITHIN_MS, log);
      return ended;
    },
  };
}
