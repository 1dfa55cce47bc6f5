/**
 * NDJSON ingestion for `target-health ingest`: the main thread reads and splits lines and hands batches
 * to worker threads (server/ingest/ingest-worker.ts), which parse, validate, classify and store them — each
 * taking its next batch while the previous one is written, so both cores and PostgreSQL stay busy.
 * Results come back in any order and are reported in line order. Every rejected line is reported with
 * its number; valid lines are stored whatever their neighbours look like.
 *
 * Memory is bounded whatever the input: a line is at most MAX_LINE_BYTES (longer ones are counted, not
 * held), a batch at most `batchSize` lines and MAX_BATCH_BYTES, and at most PER_WORKER batches per
 * worker are in flight.
 */
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { UserError } from '../../core/common/user-error';
import type { RejectedLine } from '../db/signal-store/types';
import type { BatchLine, BatchResult, ToWorker, WorkerSettings } from './ingest-messages';
import { readLines } from './ingest-lines';

export interface StreamIngestOptions {
  /** Where batches are stored; null for --dry-run (validate only). */
  databaseUrl: string | null;
  batchSize: number;
  /** A statement or answer from the database taking longer than this fails the run with exit 3. */
  timeoutMs?: number;
  /** Worker threads; each holds up to two batches, each written in its own transaction. */
  workers: number;
  /** Days of minute rollups kept (TARGET_HEALTH_MINUTE_DAYS); absent: every minute row (a backtest). */
  minuteDays?: number;
  /** The worker entry; tests substitute one that fails. Default: ingest-worker.js next to this file. */
  workerScript?: string;
  onRejected: (rejected: RejectedLine) => void;
  onProgress?: (bytesRead: number, linesDone: number) => void;
}

export interface StreamIngestSummary {
  lines: number;
  accepted: number;
  inserted: number;
  duplicates: number;
  rejected: number;
  blank: number;
  elapsedMs: number;
}

/**
 * Batches a worker holds at once. It parses each as it arrives and writes it in its own transaction, so
 * this is also the number of writes in flight per worker: PostgreSQL works on one while the next is
 * parsed and encoded.
 */
const PER_WORKER = 2;

/**
 * A larger young generation than V8's default for the workers: every line makes short-lived garbage
 * (the parsed JSON, the validated event), and fewer, larger scavenges measured ~10% more events/s.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 64 };

/**
 * A batch is sent when it reaches `batchSize` lines or this many characters, whichever comes first:
 * 10,000 typical events are ~3 MB, but 10,000 lines of 1 MB each would be 10 GB.
 */
export const MAX_BATCH_CHARS = 4 << 20;

/** Default for `timeoutMs`: generous, so a database busy for a minute slows the run rather than ends it. */
export const DEFAULT_DB_TIMEOUT_MS = 120_000;

/** The worker threads and the batches they hold. */
class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly held = new Map<Worker, number>();
  /** Settles when the worker has exited, however (registered first: a crashed worker exits only once). */
  private readonly exits = new Map<Worker, Promise<void>>();
  private waiting: Array<() => void> = [];
  /** The failure of the earliest batch (lowest seq), or of a worker itself (seq -1). */
  private firstFailure: { seq: number; error: Error } | undefined;

  constructor(count: number, script: string, settings: WorkerSettings, onResult: (result: BatchResult) => void) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(script, { workerData: settings, resourceLimits: WORKER_LIMITS });
      this.exits.set(worker, new Promise<void>((resolve) => worker.once('exit', () => resolve())));
      worker.on('message', (result: BatchResult) => {
        this.held.set(worker, (this.held.get(worker) ?? 1) - 1);
        onResult(result);
        this.wake();
      });
      worker.on('error', (err) => this.fail(-1, err));
      worker.on('exit', (code) => {
        if (this.workers.includes(worker) && code !== 0)
          this.fail(-1, new Error(`an ingest worker stopped (exit code ${code})`));
        // Whatever it held is lost (and reported through the failure): nobody waits for it.
        this.held.set(worker, 0);
        this.wake();
      });
      this.workers.push(worker);
      this.held.set(worker, 0);
    }
  }

  get failure(): Error | undefined {
    return this.firstFailure?.error;
  }

  fail(seq: number, error: Error): void {
    if (!this.firstFailure || seq < this.firstFailure.seq) this.firstFailure = { seq, error };
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  private leastBusy(): Worker {
    let best = this.workers[0]!;
    for (const w of this.workers) if (this.held.get(w)! < this.held.get(best)!) best = w;
    return best;
  }

  /** Resolves once `condition` holds (checked whenever a worker reports), or a worker failed. */
  async waitUntil(condition: () => boolean): Promise<void> {
    while (!this.failure && !condition()) await new Promise<void>((r) => this.waiting.push(r));
  }

  /** Hands a batch to the least busy worker, waiting while every worker holds PER_WORKER batches. */
  async dispatch(message: Extract<ToWorker, { type: 'batch' }>): Promise<void> {
    while (!this.failure && this.held.get(this.leastBusy())! >= PER_WORKER)
      await new Promise<void>((r) => this.waiting.push(r));
    if (this.failure) return;
    const worker = this.leastBusy();
    this.held.set(worker, this.held.get(worker)! + 1);
    worker.postMessage(message);
  }

  /**
   * Resolves when no worker holds a batch — also after a failure, so that the batches before the
   * failed one are finished (committed or failed) when the failure is reported.
   */
  async idle(): Promise<void> {
    while ([...this.held.values()].some((n) => n > 0)) await new Promise<void>((r) => this.waiting.push(r));
  }

  /** Lets the workers close their connections and exit; forces them if they do not. */
  async close(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(
      workers.map(async (w) => {
        // postMessage to a worker that already exited (a crash) is a no-op; its exit promise is settled.
        w.postMessage({ type: 'close' } satisfies ToWorker);
        const timer = setTimeout(() => void w.terminate(), 10_000);
        await this.exits.get(w);
        clearTimeout(timer);
      }),
    );
  }
}

export async function ingestStream(input: Readable, options: StreamIngestOptions): Promise<StreamIngestSummary> {
  const started = Date.now();
  const summary: StreamIngestSummary = {
    lines: 0,
    accepted: 0,
    inserted: 0,
    duplicates: 0,
    rejected: 0,
    blank: 0,
    elapsedMs: 0,
  };
  // Results arrive in any order; they are reported in batch (= line) order.
  const finished = new Map<number, Extract<BatchResult, { type: 'done' }>>();
  const bytesAtBatch = new Map<number, number>();
  let nextToReport = 0;
  let linesReported = 0;
  const report = (): void => {
    for (let r = finished.get(nextToReport); r !== undefined; r = finished.get(nextToReport)) {
      finished.delete(nextToReport);
      for (const rejected of r.rejected) options.onRejected(rejected);
      summary.rejected += r.rejected.length;
      summary.accepted += r.accepted;
      summary.inserted += r.inserted;
      summary.duplicates += r.duplicates;
      summary.blank += r.blank;
      linesReported += r.lines;
      options.onProgress?.(bytesAtBatch.get(nextToReport) ?? 0, linesReported);
      bytesAtBatch.delete(nextToReport);
      nextToReport += 1;
    }
  };
  /** First and last line of each batch in the workers, for a failure message. */
  const batchLines = new Map<number, [number, number]>();
  const script = options.workerScript ?? join(__dirname, 'ingest-worker.js');
  const settings: WorkerSettings = {
    databaseUrl: options.databaseUrl,
    timeoutMs: options.timeoutMs ?? DEFAULT_DB_TIMEOUT_MS,
    ...(options.minuteDays === undefined ? {} : { minuteDays: options.minuteDays }),
  };
  const workers = new WorkerPool(options.workers, script, settings, (result) => {
    if (result.type === 'failed') {
      const [first, last] = batchLines.get(result.seq) ?? [0, 0];
      // The database refused or went away: an operational problem, said in one line, not a crash.
      workers.fail(
        result.seq,
        new UserError(
          `database: lines ${first}–${last} could not be stored (${result.message}); every valid line before ` +
            `line ${first} ` +
            (`is stored, later ones may be in part — send the input again from line ${first} (events already ` +
              `stored are `) +
            `recognised by eventId, or by content when they have none, and not stored twice)`,
          3,
        ),
      );
    } else {
      batchLines.delete(result.seq);
      finished.set(result.seq, result);
      report();
    }
  });

  let seq = 0;
  let batch: BatchLine[] = [];
  let batchChars = 0;
  let bytesRead = 0;
  // Results wait here until every earlier batch has reported: bound how far ahead reading may run, so a
  // slow early batch cannot make later results pile up.
  const maxAhead = options.workers * PER_WORKER * 2;
  const send = async (): Promise<void> => {
    await workers.waitUntil(() => seq - nextToReport < maxAhead);
    const lines = batch;
    batch = [];
    batchChars = 0;
    const firstLine = summary.lines - lines.length + 1;
    bytesAtBatch.set(seq, bytesRead);
    batchLines.set(seq, [firstLine, summary.lines]);
    await workers.dispatch({ type: 'batch', seq, lines, firstLine });
    seq += 1;
  };
  try {
    for await (const chunk of readLines(input)) {
      bytesRead += chunk.bytes;
      for (const line of chunk.lines) {
        summary.lines += 1;
        batch.push(line);
        batchChars += typeof line === 'string' ? line.length + 1 : 64;
        if (batch.length >= options.batchSize || batchChars >= MAX_BATCH_CHARS) await send();
      }
      if (workers.failure) break;
    }
    if (batch.length > 0 && !workers.failure) await send();
    await workers.idle();
  } finally {
    await workers.close();
  }
  if (workers.failure) throw workers.failure;
  summary.elapsedMs = Date.now() - started;
  return summary;
}
