/**
 * A worker thread of `target-health ingest`: parses, validates, classifies and stores the batches of
 * lines the main thread hands it, with its own database connections. JSON.parse, validation and
 * encoding cost more than PostgreSQL's share of an event, so one thread cannot keep up with the
 * database; two (one per core) can. Each worker takes a batch while its previous one is being written.
 */
import pg from 'pg';
import { parentPort, workerData } from 'node:worker_threads';
import { createIngester } from '../db/signal-store/ingest';
import { parseNdjsonLines } from './ndjson-batch';
import type { BatchLine, BatchResult, ToWorker, WorkerSettings } from './ingest-messages';

const port = parentPort;
if (!port) throw new Error('ingest-worker.js runs as a worker thread of `target-health ingest`');

const settings = workerData as WorkerSettings;
/** The client waits a little longer than the server's own timeout, so that a live server's cancel wins. */
const queryTimeoutMs = (timeoutMs: number): number => timeoutMs + 2_000;
/** A new connection gets this long by default (PostgreSQL under load can be slow to fork a backend). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A connection for each batch the worker holds (two, each written in its own transaction). Both
 * timeouts make an outage end the run (exit 3, "send again from line N") instead of hanging it: the
 * server cancels a statement after `timeoutMs` (a lock or a slow disk), and the client gives up
 * waiting for an answer a little later (a frozen or unreachable server cannot cancel anything).
 */
function createIngestPool(databaseUrl: string, timeoutMs: number, connectTimeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 2,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: timeoutMs,
    query_timeout: queryTimeoutMs(timeoutMs),
  });
  // An idle client losing its connection must not crash the worker; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

const pool =
  settings.databaseUrl === null
    ? undefined
    : createIngestPool(settings.databaseUrl, settings.timeoutMs, settings.connectTimeoutMs ?? CONNECT_TIMEOUT_MS);
const ingester = pool
  ? createIngester(pool, settings.minuteDays === undefined ? {} : { minuteDays: settings.minuteDays })
  : undefined;

async function handle(seq: number, lines: readonly BatchLine[], firstLine: number): Promise<BatchResult> {
  const parsed = parseNdjsonLines(lines, firstLine);
  const base = { type: 'done' as const, seq, lines: lines.length, blank: parsed.blank };
  if (!ingester || parsed.events.length === 0)
    return { ...base, accepted: parsed.events.length, inserted: 0, duplicates: 0, rejected: parsed.rejected };
  try {
    const stored = await ingester.store(parsed.events, parsed.lines);
    // Lines the database refused for their data (the rest of the batch is stored) join the invalid ones.
    const rejected =
      stored.rejected.length === 0
        ? parsed.rejected
        : [...parsed.rejected, ...stored.rejected].sort((a, b) => a.line - b.line);
    return {
      ...base,
      accepted: stored.inserted + stored.duplicates,
      inserted: stored.inserted,
      duplicates: stored.duplicates,
      rejected,
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // node-postgres's words for its own timeout (a frozen or unreachable server), made plain.
    const plain =
      message === 'Query read timeout'
        ? `no answer from the database within ${Math.round(queryTimeoutMs(settings.timeoutMs) / 1000)} s`
        : message;
    return { type: 'failed', seq, message: plain };
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'batch') {
    void handle(message.seq, message.lines, message.firstLine).then((result) => port.postMessage(result));
  } else {
    void (pool?.end() ?? Promise.resolve()).finally(() => port.close());
  }
});
