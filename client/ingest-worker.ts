/**
 * A worker thread of `target-health ingest`: parses, validates, classifies and stores the batches of
 * lines the main thread hands it, with its own database connections. JSON.parse, validation and
 * encoding cost more than PostgreSQL's share of an event, so one thread cannot keep up with the
 * database; two (one per core) can. Each worker takes a batch while its previous one is being written.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createPool } from '../db/pool';
import { createIngester } from '../db/signal-store/ingest';
import { parseNdjsonLines } from './ndjson-batch';
import type { BatchResult, ToWorker, WorkerSettings } from './ingest-messages';

const port = parentPort;
if (!port) throw new Error('ingest-worker.js runs as a worker thread of `target-health ingest`');

const settings = workerData as WorkerSettings;
// A connection for each batch the worker holds (two, each written in its own transaction).
const pool = settings.databaseUrl === null ? undefined : createPool(settings.databaseUrl, 2);
const ingester = pool ? createIngester(pool) : undefined;

async function handle(seq: number, lines: readonly string[], firstLine: number): Promise<BatchResult> {
  const parsed = parseNdjsonLines(lines, firstLine);
  const base = { type: 'done' as const, seq, lines: lines.length, blank: parsed.blank, accepted: parsed.events.length, rejected: parsed.rejected };
  if (!ingester || parsed.events.length === 0) return { ...base, inserted: 0, duplicates: 0 };
  try {
    const stored = await ingester.store(parsed.events);
    return { ...base, ...stored };
  } catch (err) {
    return { type: 'failed', seq, message: err instanceof Error ? err.message : String(err) };
  }
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'batch') {
    void handle(message.seq, message.lines, message.firstLine).then((result) => port.postMessage(result));
  } else {
    void (pool?.end() ?? Promise.resolve()).finally(() => port.close());
  }
});
