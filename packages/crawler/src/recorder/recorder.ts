/**
 * The recorder a Node crawler embeds: `record(event)` is synchronous and cheap (it only buffers);
 * batches go to a sink (PostgreSQL directly, or later the HTTP API) in the background.
 *
 * Delivery rules (README "Connect a crawler", docs/signal-store.md "The recorder"):
 * - A failed write is retried with capped, jittered exponential backoff for up to `retryForMs` (15 min);
 *   a write with no answer within `writeTimeoutMs` counts as failed (a frozen database is an error, not a
 *   hang). An error the sink calls permanent (the data, not the store) is not retried: the batch is split
 *   to find the events at fault, and only those are given up.
 * - Bounded memory: up to `maxBuffered` events wait in memory. With a `spillDir`, what does not fit waits
 *   on disk (recorder/spill.ts), as do batches still failing at their deadline or at close(); a recorder
 *   started on the same directory sends what an earlier one left. Spilled events have no deadline.
 * - Backpressure before loss: `record()` returns false once memory is past `highWaterMark` and the spill
 *   (if any) past half of `maxSpillBytes`; `drain()` resolves when there is room again. Only with no room
 *   at all is an event dropped.
 * - Nothing silent: every event recorded ends stored (or a repeat the store ignored), rejected as invalid,
 *   or failed; every event not recorded is dropped. Each outcome is counted in `stats()`, given to a hook
 *   (`onRejected`, `onFailed`, `onDropped`) and logged (rate-limited) through `logger`.
 * - Safe retries: events without an id get one (recorder/event-ids.ts), so a batch sent again after a
 *   timeout or a crash is not stored twice.
 * - The recorder keeps a reference to each event until its batch is stored (no copy): do not change an
 *   event object after passing it to `record()`.
 */
import * as z from '../zod';
import { lazy } from '../lazy';
import type { IngestResult, RejectedLine } from './types';
import { retryDelayMs } from './backoff';
import { withoutUndefinedHeaders, type RecordInput } from './record-input';
import { createEventIdSource } from './event-ids';
import { createReporter, defaultRecorderLogger, describeError, type RecorderLogger } from './report';
import { Spill } from './spill';

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
  /**
   * True for an error a retry cannot cure (the data, not the store: a value out of a column's range).
   * The recorder then splits the batch to find the events at fault instead of retrying it. Absent: every
   * error is retried.
   */
  isPermanentError?(err: unknown): boolean;
  /** Releases what the sink owns (its connection pool); the recorder's close() calls it last. */
  close?(): Promise<void>;
}

export interface RecorderOptions {
  sink: EventSink;
  /** Events per write (2,000). */
  batchSize?: number;
  /** A partial batch is written after this long (1 s). */
  flushIntervalMs?: number;
  /** Events in memory above which record() returns false unless the spill has room (50,000). */
  highWaterMark?: number;
  /** Events held in memory at most (twice highWaterMark); beyond, they go to the spill, or are dropped. */
  maxBuffered?: number;
  /** recordAsync() waits at most this long for room (50 ms). */
  maxWaitMs?: number;
  /**
   * Batches written at once: several keep PostgreSQL busy while the next batch is
   * prepared (4 measured best on 2 cores).
   */
  maxConcurrentWrites?: number;
  /** A batch in memory is retried this long before it is spilled (with spillDir) or given up (15 min). */
  retryForMs?: number;
  /** First retry delay (100 ms); it doubles per attempt up to retryMaxDelayMs (5 s), with jitter. */
  retryInitialDelayMs?: number;
  retryMaxDelayMs?: number;
  /** A write with no answer within this counts as failed and is retried (60 s). */
  writeTimeoutMs?: number;
  /** A directory for events that memory cannot hold (created if missing; one recorder per directory). */
  spillDir?: string;
  /** Bytes the spill may hold (1 GiB); record() returns false past half of it. */
  maxSpillBytes?: number;
  /** Where problems are logged (a pino logger fits); default: JSON lines on stderr. */
  logger?: RecorderLogger;
  /** Events the store refused as invalid (line = 1-based position in `batch`). */
  onRejected?: (rejected: RejectedLine[], batch: readonly Record<string, unknown>[]) => void;
  /** Events record() could not keep (no room anywhere). */
  onDropped?: (count: number, reason: string) => void;
  /**
   * Recorded events given up: not stored by their deadline (without a spill), refused by the
   * store, or lost from the spill.
   */
  onFailed?: (count: number, err: unknown) => void;
  /** Every failed write attempt (before it is retried). */
  onError?: (err: unknown, attempt: number, batchSize: number) => void;
}

export interface RecorderStats {
  /** Events record() accepted (kept in memory or on disk). */
  recorded: number;
  /** Events an earlier recorder left in spillDir, found at start. */
  recovered: number;
  /** Stored for the first time. */
  stored: number;
  /** Sent again (a retry, a resend after a crash): already stored, ignored. */
  duplicates: number;
  /** Refused by the store as invalid (see onRejected). */
  rejected: number;
  /** Refused by record(): no room in memory or on disk. Never recorded. */
  dropped: number;
  /** Recorded but given up (see onFailed). */
  failed: number;
  /** In memory: waiting or being written. */
  buffered: number;
  /** On disk (or being written there), waiting to be sent. */
  spilled: number;
  /** Bytes the spill holds. */
  spillBytes: number;
}
// recorded + recovered = stored + duplicates + rejected + failed + buffered + spilled, at any moment.

/** What recordWithId() tells about one event. */
export interface RecordOutcome {
  /**
   * The event's idempotency key as stored (`event_id`): its own `eventId`, or the one the recorder
   * gave it. Log it to find the row.
   */
  id: string;
  /** False: no room in memory or on disk, the event was dropped (counted in stats().dropped, given to onDropped). */
  kept: boolean;
  /** True: memory (and the spill) are past their high-water marks; await drain() before the next event. */
  slowDown: boolean;
}

export interface Recorder {
  /**
   * Keeps the event (by reference until stored: do not change it afterwards). False means "slow down":
   * await drain() before the next one. It is also false for an event that was dropped (stats, onDropped).
   * Header values that are `undefined` are left out (the event is then kept as a shallow copy).
   */
  record(event: RecordInput): boolean;
  /** record(), answering the event's id too (to match the crawler's log lines with stored rows). */
  recordWithId(event: RecordInput): RecordOutcome;
  /** record() after waiting at most maxWaitMs for room. */
  recordAsync(event: RecordInput): Promise<boolean>;
  /** Resolves when record() would return true again. */
  drain(): Promise<void>;
  /** Writes every event in memory now and waits until each is stored or settled. */
  flush(): Promise<void>;
  /**
   * Flushes, then sends what is on disk while the store takes it; what it does not take stays on disk
   * (with spillDir) for the next start. Without spillDir, waits up to retryForMs for a failing store.
   */
  close(): Promise<void>;
  stats(): RecorderStats;
}

/**
 * The wait a sink's error asks for before the next attempt (`retryAfterMs`, e.g. from an HTTP
 * `Retry-After`), capped at a minute so a wrong header cannot stall the recorder; 0 when none.
 */
function retryAfterMsOf(err: unknown): number {
  const ms = typeof err === 'object' && err !== null ? (err as { retryAfterMs?: unknown }).retryAfterMs : undefined;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.min(ms, 60_000) : 0;
}

/** The sink gave no answer in time. The write may still complete; a retry is safe (event ids). */
export class WriteTimeoutError extends Error {
  readonly code = 'WRITE_TIMEOUT';
  constructor(ms: number) {
    super(`no answer from the store within ${ms} ms (writeTimeoutMs)`);
    this.name = 'WriteTimeoutError';
  }
}

const MS_PER_MINUTE = 60_000;
// Built on the first createRecorder() call, not at load (../lazy.ts).
const optionsSchema = lazy(() => {
  const wholeAtLeast = (min: number) => z.number().int(`must be a whole number`).min(min, `must be at least ${min}`);
  const hookSchema = z.custom<(...args: never[]) => unknown>((f) => typeof f === 'function', 'must be a function');
  return z.strictObject({
    sink: z.custom<EventSink>(
      (s) => typeof s === 'object' && s !== null && typeof (s as EventSink).write === 'function',
      'must be an EventSink (an object with write(batch)), e.g. postgresSink(...)',
    ),
    batchSize: wholeAtLeast(1).optional(),
    flushIntervalMs: wholeAtLeast(1).optional(),
    highWaterMark: wholeAtLeast(1).optional(),
    maxBuffered: wholeAtLeast(1).optional(),
    maxWaitMs: wholeAtLeast(0).optional(),
    maxConcurrentWrites: wholeAtLeast(1).optional(),
    retryForMs: wholeAtLeast(0).optional(),
    retryInitialDelayMs: wholeAtLeast(1).optional(),
    retryMaxDelayMs: wholeAtLeast(1).optional(),
    writeTimeoutMs: wholeAtLeast(1).optional(),
    spillDir: z.string().min(1, 'must name a directory').optional(),
    maxSpillBytes: wholeAtLeast(1024).optional(),
    logger: z
      .custom<RecorderLogger>(
        (l) =>
          typeof l === 'object' &&
          l !== null &&
          ['info', 'warn', 'error'].every((m) => typeof (l as Record<string, unknown>)[m] === 'function'),
        'must have info, warn and error methods (a pino logger fits)',
      )
      .optional(),
    onRejected: hookSchema.optional(),
    onDropped: hookSchema.optional(),
    onFailed: hookSchema.optional(),
    onError: hookSchema.optional(),
  });
});

/** A clear one-line error naming the option, instead of odd behaviour later. */
function checkOptions(options: RecorderOptions): void {
  const parsed = optionsSchema().safeParse(options);
  if (parsed.success) {
    if (options.maxBuffered !== undefined && options.maxBuffered < (options.highWaterMark ?? 50_000)) {
      throw new Error(
        `createRecorder: maxBuffered: must be at least highWaterMark (${options.highWaterMark ?? 50_000}) (got ` +
          `${options.maxBuffered})`,
      );
    }
    return;
  }
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.') || 'options';
  const got =
    issue.path.length === 1 ? (options as unknown as Record<string, unknown>)[String(issue.path[0])] : options;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.join(', ');
    const hint = issue.keys.includes('maxAttempts')
      ? ' (maxAttempts was replaced by retryForMs: batches are retried for a time, not a count)'
      : issue.keys.includes('onDrop')
        ? ' (onDrop is now onDropped)'
        : '';
    throw new Error(`createRecorder: ${keys}: unknown option${hint}`);
  }
  throw new Error(
    `createRecorder: ${field}: ${issue.message} (got ` +
      `${typeof got === 'number' || typeof got === 'string' ? JSON.stringify(got) : typeof got})`,
  );
}

interface Batch {
  events: readonly Record<string, unknown>[];
  ids: readonly string[];
}

export function createRecorder(options: RecorderOptions): Recorder {
  checkOptions(options);
  const sink = options.sink;
  const batchSize = options.batchSize ?? 2_000;
  const highWaterMark = options.highWaterMark ?? 50_000;
  const maxBuffered = options.maxBuffered ?? highWaterMark * 2;
  const maxWaitMs = options.maxWaitMs ?? 50;
  const maxConcurrentWrites = options.maxConcurrentWrites ?? 4;
  const retryForMs = options.retryForMs ?? 15 * MS_PER_MINUTE;
  const backoff = { initialMs: options.retryInitialDelayMs ?? 100, maxMs: options.retryMaxDelayMs ?? 5_000 };
  const writeTimeoutMs = options.writeTimeoutMs ?? 60_000;
  const maxSpillBytes = options.maxSpillBytes ?? 1024 ** 3;
  const spillHighWater = maxSpillBytes / 2;

  let logger = options.logger;
  const log = (): RecorderLogger => (logger ??= defaultRecorderLogger());
  const counts = { recorded: 0, recovered: 0, stored: 0, duplicates: 0, rejected: 0, dropped: 0, failed: 0 };
  const buffer: Record<string, unknown>[] = [];
  /** The id of each buffered event (its own, or one made here). */
  const bufferIds: string[] = [];
  /** Events in batches being written (or retried) from memory. */
  let inFlight = 0;
  /** Memory batches being written. */
  let active = 0;
  let closing = false;
  let closed = false;
  let closePromise: Promise<void> | undefined;
  const nextEventId = createEventIdSource();
  const pending = () => buffer.length + inFlight;

  const reporter = createReporter(log, {
    backlog: () => ({ buffered: pending(), spilled: spill?.events ?? 0 }),
    retryForMs,
    spillDir: options.spillDir,
  });

  /** A crawler's hook must not break the accounting: its errors are logged, not thrown into the write loop. */
  function hook(name: string, call: () => void): void {
    try {
      call();
    } catch (err) {
      log().error({ err: describeError(err) }, `recorder: the crawler's ${name} hook threw; ignored`);
    }
  }

  function fail(count: number, err: unknown, why: string): void {
    counts.failed += count;
    reporter.failed(count, err, why);
    hook('onFailed', () => options.onFailed?.(count, err));
  }

  function drop(reason: string): void {
    counts.dropped += 1;
    reporter.dropped(1, reason);
    hook('onDropped', () => options.onDropped?.(1, reason));
  }

  const spill =
    options.spillDir === undefined
      ? undefined
      : Spill.open(options.spillDir, {
          maxBytes: maxSpillBytes,
          onWriteError: (lost, err) => fail(lost, err, `could not be written to ${options.spillDir}`),
        });
  counts.recovered = spill?.events ?? 0;
  const spillHasRoom = () => spill !== undefined && spill.bytes < spillHighWater;
  const hasRoom = () => pending() < highWaterMark || spillHasRoom();

  const drainWaiters: Array<() => void> = [];
  const notifyDrain = () => {
    if (hasRoom() || closed) while (drainWaiters.length > 0) drainWaiters.shift()!();
  };

  /** Retry pauses, cut short when close() starts (so a spill-backed close does not wait out a backoff). */
  const sleepers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });

  /** Waiters for the next successful write (the replay lets live writes probe a failing store). */
  let successWaiters: Array<() => void> = [];
  const writeSucceeded = () => {
    reporter.writeSucceeded();
    const waiters = successWaiters;
    successWaiters = [];
    for (const w of waiters) w();
  };
  const nextSuccessOr = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        successWaiters = successWaiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
      successWaiters.push(done);
    });

  /** One attempt; an answer later than writeTimeoutMs is a failure (the write itself may still land). */
  async function attempt(batch: Batch): Promise<IngestResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WriteTimeoutError(writeTimeoutMs)), writeTimeoutMs);
    });
    try {
      // Through then(): a sink that throws instead of rejecting is handled the same way.
      return await Promise.race([
        Promise.resolve().then(() => sink.write({ events: batch.events, eventIds: batch.ids })),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  function account(result: IngestResult, batch: Batch): void {
    const events = batch.events;
    counts.stored += result.inserted;
    counts.duplicates += result.duplicates;
    if (result.rejected.length > 0) {
      counts.rejected += result.rejected.length;
      const first = result.rejected[0]!;
      reporter.rejected(result.rejected.length, first.errors[0] ?? 'invalid', batch.ids[first.line - 1]);
      hook('onRejected', () => options.onRejected?.(result.rejected, events));
    }
  }

  const isPermanent = (err: unknown) => {
    try {
      return sink.isPermanentError?.(err) === true;
    } catch {
      return false;
    }
  };

  const half = (batch: Batch, first: boolean): Batch => {
    const mid = Math.ceil(batch.events.length / 2);
    return first
      ? { events: batch.events.slice(0, mid), ids: batch.ids.slice(0, mid) }
      : { events: batch.events.slice(mid), ids: batch.ids.slice(mid) };
  };

  /** Moves a memory batch to the spill; what it cannot take is given up (counted, reported). */
  function spillBatch(batch: Batch, err: unknown): void {
    let full = 0;
    let unserialisable = 0;
    for (let i = 0; i < batch.events.length; i++) {
      const result = spill!.append(batch.ids[i]!, batch.events[i]!);
      if (result === 'full') full += 1;
      else if (result === 'unserialisable') unserialisable += 1;
    }
    if (full + unserialisable < batch.events.length) {
      reporter.spilling();
      startReplay();
    }
    if (full > 0)
      fail(full, err, `not stored in time and the spill directory is full (maxSpillBytes ${maxSpillBytes})`);
    if (unserialisable > 0)
      fail(unserialisable, err, 'not stored in time and not serialisable as JSON, so it cannot be kept on disk');
  }

  /** A batch from memory: stored, or (at its deadline, or failing during close) spilled or given up. */
  async function writeMemoryBatch(batch: Batch): Promise<void> {
    const started = Date.now();
    for (let n = 1; ; n++) {
      try {
        const result = await attempt(batch);
        writeSucceeded();
        account(result, batch);
        return;
      } catch (err) {
        hook('onError', () => options.onError?.(err, n, batch.events.length));
        if (isPermanent(err)) {
          if (batch.events.length === 1) return fail(1, err, 'the store refused it');
          await writeMemoryBatch(half(batch, true));
          return writeMemoryBatch(half(batch, false));
        }
        reporter.writeFailed(err);
        // Closing with a spill: on disk the batch is safe, and close() need not wait out the outage.
        if (closing && spill) return spillBatch(batch, err);
        const left = started + retryForMs - Date.now();
        if (left <= 0) {
          if (spill) return spillBatch(batch, err);
          return fail(batch.events.length, err, `not stored within retryForMs (${retryForMs} ms)`);
        }
        await pause(Math.min(Math.max(retryDelayMs(n, backoff), retryAfterMsOf(err)), left));
      }
    }
  }

  /** A batch read back from the spill: retried without deadline; false = left on disk (closing). */
  async function writeSpilledBatch(batch: Batch): Promise<boolean> {
    for (let n = 1; ; n++) {
      try {
        const result = await attempt(batch);
        writeSucceeded();
        account(result, batch);
        spill!.settle(batch.events.length);
        return true;
      } catch (err) {
        hook('onError', () => options.onError?.(err, n, batch.events.length));
        if (isPermanent(err)) {
          if (batch.events.length === 1) {
            fail(1, err, 'the store refused it');
            spill!.settle(1);
            return true;
          }
          return (await writeSpilledBatch(half(batch, true))) && writeSpilledBatch(half(batch, false));
        }
        reporter.writeFailed(err);
        if (closing) return false;
        await pause(Math.max(retryDelayMs(n, backoff), retryAfterMsOf(err)));
      }
    }
  }

  let replay: Promise<void> | undefined;
  /** Sends the spill, oldest segment first, while it holds events (one batch at a time beside the live writes). */
  function startReplay(): void {
    if (!spill || replay || closed) return;
    replay = replaySpill()
      .catch((err: unknown) => {
        log().error(
          { err: describeError(err), spillDir: spill.dir },
          'recorder: cannot read the spill directory; retrying later, its files are kept',
        );
        return pause(backoff.maxMs);
      })
      .finally(() => {
        replay = undefined;
        if (!closing && spill.events > 0) startReplay();
      });
  }

  async function replaySpill(): Promise<void> {
    const s = spill!;
    while (s.events > 0) {
      // While live writes fail they probe the store; re-reading segments only to fail them helps nobody.
      while (reporter.failing && active > 0 && !closing) await nextSuccessOr(backoff.maxMs);
      const segment = await s.takeOldest();
      if (!segment) return;
      if (segment.unreadable > 0) {
        fail(
          segment.unreadable,
          new Error('unreadable line'),
          `lines of ${segment.name} in ${s.dir} could not be read back (cut short by a crash?)`,
        );
        s.settle(segment.unreadable);
      }
      for (let i = 0; i < segment.events.length; i += batchSize) {
        const part = segment.events.slice(i, i + batchSize);
        if (!(await writeSpilledBatch({ events: part.map((e) => e.event), ids: part.map((e) => e.id) }))) {
          s.putBack(segment, segment.events.length - i);
          return;
        }
      }
      await s.remove(segment);
      notifyDrain();
    }
    reporter.spillEmptied();
  }

  /** >0 while someone waits for a full flush: partial batches are written too. */
  let flushing = 0;
  const idleWaiters: Array<() => void> = [];

  /** Starts writes (up to maxConcurrentWrites) for full batches, or for anything when flushing. */
  function pump(): void {
    while (active < maxConcurrentWrites && (buffer.length >= batchSize || (flushing > 0 && buffer.length > 0))) {
      const events = buffer.splice(0, batchSize);
      const ids = bufferIds.splice(0, batchSize);
      inFlight += events.length;
      active += 1;
      void writeMemoryBatch({ events, ids }).finally(() => {
        inFlight -= events.length;
        active -= 1;
        notifyDrain();
        pump();
        if (active === 0 && (buffer.length === 0 || flushing === 0))
          while (idleWaiters.length > 0) idleWaiters.shift()!();
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
  if (spill && spill.events > 0) startReplay();

  /** No room in memory: the spill takes the event, or it is dropped. */
  function overflow(event: Record<string, unknown>, id: string): boolean {
    if (!spill) {
      drop(`memory full: ${maxBuffered} events wait for the store (maxBuffered)`);
      return false;
    }
    const result = spill.append(id, event);
    if (result === 'ok') {
      counts.recorded += 1;
      reporter.spilling();
      startReplay();
      return spillHasRoom();
    }
    drop(
      result === 'full'
        ? `memory and spill directory full (maxSpillBytes ${maxSpillBytes})`
        : 'memory full, and the event is not serialisable as JSON, so it cannot be kept on disk',
    );
    return false;
  }

  function keep(input: RecordInput): RecordOutcome {
    if (closed) throw new Error('recorder is closed: record() was called after close()');
    const event = withoutUndefinedHeaders(input) as Record<string, unknown>;
    const id = typeof event.eventId === 'string' ? event.eventId : nextEventId();
    if (pending() >= maxBuffered) {
      const kept = overflow(event, id);
      return { id, kept, slowDown: !kept || !spillHasRoom() };
    }
    buffer.push(event);
    bufferIds.push(id);
    counts.recorded += 1;
    if (buffer.length >= batchSize) pump();
    return { id, kept: true, slowDown: !(pending() < highWaterMark || spillHasRoom()) };
  }

  const recorder: Recorder = {
    record(event) {
      const outcome = keep(event);
      return outcome.kept && !outcome.slowDown;
    },
    recordWithId: keep,
    async recordAsync(event) {
      if (!hasRoom()) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([recorder.drain(), new Promise<void>((r) => (timer = setTimeout(r, maxWaitMs)))]);
        clearTimeout(timer);
      }
      return recorder.record(event);
    },
    drain() {
      if (hasRoom() || closed) return Promise.resolve();
      return new Promise((resolve) => drainWaiters.push(resolve));
    },
    flush: flushAll,
    close() {
      closePromise ??= (async () => {
        clearInterval(timer);
        closing = true;
        for (const wake of [...sleepers]) wake();
        await flushAll();
        if (spill) {
          startReplay();
          while (replay) await replay;
          await spill.close();
          if (spill.events > 0) reporter.leftOnDisk(spill.events);
        }
        reporter.flushSummaries();
        closed = true;
        notifyDrain();
        await sink.close?.();
      })();
      return closePromise;
    },
    stats: () => ({ ...counts, buffered: pending(), spilled: spill?.events ?? 0, spillBytes: spill?.bytes ?? 0 }),
  };
  return recorder;
}
