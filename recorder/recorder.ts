/**
 * The recorder a Node crawler embeds: `record(event)` is synchronous and cheap (it only buffers);
 * batches go to a sink (PostgreSQL directly, or later the HTTP API) in the background.
 *
 * - Bounded memory with backpressure: past `highWaterMark` buffered events `record()` returns false
 *   (like a stream's write) and `drain()` resolves once below it again; at twice that, events are
 *   dropped — counted in `stats().dropped` and reported through `onDrop`, never silently.
 * - Never stalls the crawler for long: `recordAsync()` waits for room at most `maxWaitMs`.
 * - Safe retries: events without an id get one (recorder/event-ids.ts), so a batch re-sent after a
 *   timeout is not counted twice.
 * - `close()` flushes everything (call it on shutdown).
 * - The recorder keeps a reference to each event until its batch is stored (no copy): do not change an
 *   event object after passing it to `record()`.
 */
import type { IngestResult, RejectedLine } from '../db/signal-store/types';
import { createEventIdSource } from './event-ids';

/**
 * One batch for a sink. `eventIds[i]` is the idempotency key of `events[i]`: its own `eventId`, or one
 * the recorder made for it. The recorder never copies or modifies the crawler's event objects (a copy
 * per event costs more than validating it), so a sink applies the ids where events have none.
 */
export interface RecordedBatch {
  events: readonly Record<string, unknown>[];
  eventIds: readonly string[];
}

export interface EventSink {
  /** Stores a batch; may be called again with the same batch after a failure (ids make that safe). */
  write(batch: RecordedBatch): Promise<IngestResult>;
}

export interface RecorderOptions {
  sink: EventSink;
  /** Events per write. */
  batchSize?: number;
  /** A partial batch is written after this long. */
  flushIntervalMs?: number;
  /** Buffered events above which record() returns false. Events are dropped at twice this. */
  highWaterMark?: number;
  /** recordAsync() waits at most this long for room. */
  maxWaitMs?: number;
  /** Batches written at once: several keep PostgreSQL busy while the next batch is prepared (4 measured best on 2 cores). */
  maxConcurrentWrites?: number;
  /** Attempts per batch before it is given up (with exponential backoff, capped at 10 s). */
  maxAttempts?: number;
  onRejected?: (rejected: RejectedLine[], batch: readonly Record<string, unknown>[]) => void;
  onDrop?: (count: number) => void;
  onError?: (err: unknown, attempt: number, batchSize: number) => void;
}

export interface RecorderStats {
  recorded: number;
  stored: number;
  duplicates: number;
  rejected: number;
  dropped: number;
  /** Events in batches given up after maxAttempts failed writes. */
  failed: number;
  buffered: number;
}

export interface Recorder {
  /** Buffers the event (kept by reference until stored: do not change it afterwards). */
  record(event: Record<string, unknown>): boolean;
  recordAsync(event: Record<string, unknown>): Promise<boolean>;
  drain(): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): RecorderStats;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createRecorder(options: RecorderOptions): Recorder {
  const batchSize = options.batchSize ?? 2_000;
  const highWaterMark = options.highWaterMark ?? 50_000;
  const hardLimit = highWaterMark * 2;
  const maxWaitMs = options.maxWaitMs ?? 50;
  const maxAttempts = options.maxAttempts ?? 5;
  const maxConcurrentWrites = options.maxConcurrentWrites ?? 4;
  const stats: RecorderStats = { recorded: 0, stored: 0, duplicates: 0, rejected: 0, dropped: 0, failed: 0, buffered: 0 };
  const buffer: Record<string, unknown>[] = [];
  /** The id of each buffered event (its own, or one made here). */
  const bufferIds: string[] = [];
  let inFlight = 0;
  let closed = false;
  const drainWaiters: Array<() => void> = [];
  const nextEventId = createEventIdSource();

  const pending = () => buffer.length + inFlight;
  const notifyDrain = () => {
    if (pending() < highWaterMark) while (drainWaiters.length > 0) drainWaiters.shift()!();
  };

  async function writeBatch(batch: Record<string, unknown>[], ids: string[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await options.sink.write({ events: batch, eventIds: ids });
        stats.stored += result.inserted;
        stats.duplicates += result.duplicates;
        if (result.rejected.length > 0) {
          stats.rejected += result.rejected.length;
          options.onRejected?.(result.rejected, batch);
        }
        return;
      } catch (err) {
        options.onError?.(err, attempt, batch.length);
        if (attempt >= maxAttempts) {
          stats.failed += batch.length;
          return;
        }
        await sleep(Math.min(10_000, 100 * 2 ** (attempt - 1)));
      }
    }
  }

  let active = 0;
  /** >0 while someone waits for a full flush: partial batches are written too. */
  let flushing = 0;
  const idleWaiters: Array<() => void> = [];

  /** Starts writes (up to maxConcurrentWrites) for full batches, or for anything when flushing. */
  function pump(): void {
    while (active < maxConcurrentWrites && (buffer.length >= batchSize || (flushing > 0 && buffer.length > 0))) {
      const batch = buffer.splice(0, batchSize);
      const ids = bufferIds.splice(0, batchSize);
      inFlight += batch.length;
      active += 1;
      void writeBatch(batch, ids).finally(() => {
        inFlight -= batch.length;
        active -= 1;
        stats.buffered = pending();
        notifyDrain();
        pump();
        if (active === 0 && (buffer.length === 0 || flushing === 0)) while (idleWaiters.length > 0) idleWaiters.shift()!();
      });
    }
  }

  async function flushAll(): Promise<void> {
    flushing += 1;
    try {
      while (buffer.length > 0 || active > 0) {
        const idle = new Promise<void>((resolve) => idleWaiters.push(resolve));
        pump();
        await idle;
      }
    } finally {
      flushing -= 1;
    }
  }

  const timer = setInterval(() => {
    if (buffer.length > 0 && active === 0) void flushAll();
  }, options.flushIntervalMs ?? 1_000);
  timer.unref();

  const recorder: Recorder = {
    record(event) {
      if (closed) throw new Error('recorder is closed');
      if (pending() >= hardLimit) {
        stats.dropped += 1;
        options.onDrop?.(1);
        return false;
      }
      buffer.push(event);
      bufferIds.push(typeof event.eventId === 'string' ? event.eventId : nextEventId());
      stats.recorded += 1;
      stats.buffered = pending();
      if (buffer.length >= batchSize) pump();
      return pending() < highWaterMark;
    },
    async recordAsync(event) {
      if (pending() >= highWaterMark) await Promise.race([recorder.drain(), sleep(maxWaitMs)]);
      return recorder.record(event);
    },
    drain() {
      if (pending() < highWaterMark) return Promise.resolve();
      return new Promise((resolve) => drainWaiters.push(resolve));
    },
    flush: flushAll,
    async close() {
      clearInterval(timer);
      await recorder.flush();
      closed = true;
    },
    stats: () => ({ ...stats, buffered: pending() }),
  };
  return recorder;
}
