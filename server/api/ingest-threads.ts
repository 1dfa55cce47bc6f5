/**
 * Worker threads for `POST /v1/events` (NDJSON bodies): the same worker as `target-health ingest`
 * (server/ingest/ingest-worker.ts) parses, validates, classifies and stores a body's lines with its own
 * connections, so the server's event loop only reads the body, undoes gzip and splits lines. Parsing
 * and classification cost more than PostgreSQL's share of an event; on the main thread they capped the
 * server at one core (docs/api.md, "Figures"). One thread per core, at least two.
 *
 * A worker that fails or exits fails the batches it held (the client gets 503 and resends: nothing is
 * stored twice) and is replaced.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { BatchLine, BatchResult, ToWorker, WorkerSettings } from '../ingest/ingest-messages';

export interface IngestThreadsOptions {
  /** The compiled worker script (dist/server/ingest/ingest-worker.js). */
  script: string;
  databaseUrl: string;
  threads?: number;
  /** A statement taking longer fails its batch (503) instead of hanging the request. */
  timeoutMs?: number;
  /** Waiting longer for a connection fails the batch too (default 10 s). */
  connectTimeoutMs?: number;
  /** Days of minute rollups kept (TARGET_HEALTH_MINUTE_DAYS); absent: every minute row. */
  minuteDays?: number;
}

type Done = Extract<BatchResult, { type: 'done' }>;

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (r: Done) => void; reject: (e: Error) => void }>;
}

export class IngestThreads {
  private readonly slots: Slot[] = [];
  private seq = 0;
  private closing = false;
  private readonly settings: WorkerSettings;

  constructor(private readonly options: IngestThreadsOptions) {
    this.settings = {
      databaseUrl: options.databaseUrl,
      timeoutMs: options.timeoutMs ?? 60_000,
      ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
      ...(options.minuteDays === undefined ? {} : { minuteDays: options.minuteDays }),
    };
    const n = options.threads ?? Math.min(4, Math.max(2, availableParallelism()));
    for (let i = 0; i < n; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(this.options.script, { workerData: this.settings }), pending: new Map() };
    slot.worker.on('message', (result: BatchResult) => {
      const waiter = slot.pending.get(result.seq);
      slot.pending.delete(result.seq);
      if (result.type === 'done') waiter?.resolve(result);
      else waiter?.reject(Object.assign(new Error(result.message), { code: 'INGEST_FAILED' }));
    });
    const lost = (why: string): void => {
      for (const w of slot.pending.values()) w.reject(Object.assign(new Error(why), { code: 'INGEST_FAILED' }));
      slot.pending.clear();
      const i = this.slots.indexOf(slot);
      if (i >= 0 && !this.closing) this.slots[i] = this.spawn();
    };
    slot.worker.on('error', (err) => lost(`an ingest thread failed: ${err.message}`));
    slot.worker.on('exit', (code) => lost(`an ingest thread stopped (exit code ${code})`));
    return slot;
  }

  /** Stores one body's lines (0-based numbering); resolves once the worker's transaction has committed. */
  run(lines: BatchLine[]): Promise<Done> {
    if (this.closing)
      return Promise.reject(Object.assign(new Error('the server is closing'), { code: 'INGEST_FAILED' }));
    let slot = this.slots[0]!;
    for (const s of this.slots) if (s.pending.size < slot.pending.size) slot = s;
    const seq = ++this.seq;
    return new Promise<Done>((resolve, reject) => {
      slot.pending.set(seq, { resolve, reject });
      slot.worker.postMessage({ type: 'batch', seq, lines, firstLine: 0 } satisfies ToWorker);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.worker.once('exit', () => resolve());
            s.worker.postMessage({ type: 'close' } satisfies ToWorker);
          }),
      ),
    );
  }
}
