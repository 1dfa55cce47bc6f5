/**
 * The recorder's contract with a crawler, against in-memory sinks (the sink is the unit's only
 * collaborator; the PostgreSQL sink under a real outage is test/integration/recorder-outage.test.ts).
 * Time-dependent rules (retry deadline, backoff, write timeout) run on Jest's fake clock.
 */
import { createRecorder, WriteTimeoutError, type EventSink } from '../../../server/compat/recorder';
import { captureLogger, ev, expectAccounted, memoryStore, ok } from './helpers';
import { joinRegExp } from '../../kit/regexp';

/** A sink whose writes complete only when the test says so. */
function gatedSink() {
  const batches: Array<readonly Record<string, unknown>[]> = [];
  const gates: Array<() => void> = [];
  const sink: EventSink = {
    write: ({ events }) => {
      batches.push(events);
      return new Promise((resolve) => gates.push(() => resolve(ok(events.length))));
    },
  };
  return { sink, batches, release: () => gates.splice(0).forEach((g) => g()) };
}

const quiet = () => captureLogger().logger;

afterEach(() => jest.useRealTimers());

test(
  'batches by size, gives every event an id (without touching the event), ' + 'and flushes the rest on close',
  async () => {
    const written: Record<string, unknown>[][] = [];
    const writtenIds: string[][] = [];
    const recorder = createRecorder({
      sink: {
        write: ({ events: e, eventIds: ids }) => (
          written.push([...e]),
          writtenIds.push([...ids]),
          Promise.resolve(ok(e.length))
        ),
      },
      batchSize: 3,
      flushIntervalMs: 60_000,
      logger: quiet(),
    });
    const events = Array.from({ length: 7 }, (_, i) => ev(i));
    for (const e of events) expect(recorder.record(e)).toBe(true);
    await recorder.close();
    expect(written.map((b) => b.length)).toEqual([3, 3, 1]);
    expect(written.flat()).toEqual(events);
    expect(written.flat().every((e, i) => e === events[i] && !('eventId' in e))).toBe(true);
    const ids = writtenIds.flat();
    expect(new Set(ids).size).toBe(7);
    // One recorder's ids grow monotonically (the store's unique index takes them in order).
    expect([...ids].sort()).toEqual(ids);
    expect(recorder.stats()).toMatchObject({ recorded: 7, stored: 7, buffered: 0, dropped: 0, failed: 0, spilled: 0 });
    expectAccounted(recorder.stats());
    expect(() => recorder.record(ev(8))).toThrow('recorder is closed: record() was called after close()');
  },
);

test('keeps an id the crawler gave', async () => {
  const writtenIds: string[] = [];
  const recorder = createRecorder({
    sink: { write: ({ events: e, eventIds: ids }) => (writtenIds.push(...ids), Promise.resolve(ok(e.length))) },
    logger: quiet(),
  });
  recorder.record({ ...ev(1), eventId: 'mine-1' });
  recorder.record(ev(2));
  await recorder.close();
  expect(writtenIds[0]).toBe('mine-1');
  expect(writtenIds[1]).toMatch(/^[A-Za-z0-9_-]{16}-[0-9a-z]{10}$/);
});

test(
  'backpressure without a spill: record() turns false at the high-water mark, drain() resolves below it, and ' +
    'past maxBuffered it drops — counted, hooked and logged',
  async () => {
    const gate = gatedSink();
    const drops: Array<[number, string]> = [];
    const { logger, lines } = captureLogger();
    const recorder = createRecorder({
      sink: gate.sink,
      batchSize: 10,
      highWaterMark: 20,
      flushIntervalMs: 60_000,
      onDropped: (n, why) => drops.push([n, why]),
      logger,
    });
    const results = Array.from({ length: 45 }, (_, i) => recorder.record(ev(i)));
    expect(results.slice(0, 19).every(Boolean)).toBe(true);
    expect(results[19]).toBe(false);
    expect(recorder.stats()).toMatchObject({ recorded: 40, dropped: 5, buffered: 40 });
    expect(drops).toEqual(
      Array.from({ length: 5 }, () => [1, 'memory full: 40 events wait for the store (maxBuffered)']),
    );
    // The first drop is logged at once (later ones are summed into one line every 10 s).
    expect(lines.filter((l) => l.level === 'warn' && /dropped 1 events .*memory full/.test(l.message))).toHaveLength(1);
    let drained = false;
    const draining = recorder.drain().then(() => (drained = true));
    // Release writes until the buffer is below the mark.
    while (!drained) {
      gate.release();
      await new Promise((r) => setImmediate(r));
    }
    await draining;
    expect(recorder.stats().buffered).toBeLessThan(20);
    const closing = recorder.close();
    while (recorder.stats().buffered > 0) {
      gate.release();
      await new Promise((r) => setImmediate(r));
    }
    await closing;
    expect(recorder.stats()).toMatchObject({ stored: 40, buffered: 0, dropped: 5 });
    expectAccounted(recorder.stats());
    // The summed drops are logged by close() at the latest.
    expect(
      lines
        .filter((l) => l.level === 'warn' && /^recorder: dropped \d+ events/.test(l.message))
        .reduce((n, l) => n + (l.fields.dropped as number), 0),
    ).toBe(5);
  },
);

test('recordAsync waits for room at most maxWaitMs, so the crawler never stalls for long', async () => {
  jest.useFakeTimers();
  const gate = gatedSink();
  const recorder = createRecorder({
    sink: gate.sink,
    batchSize: 5,
    highWaterMark: 5,
    maxWaitMs: 30,
    flushIntervalMs: 60_000,
    logger: quiet(),
  });
  for (let i = 0; i < 5; i++) recorder.record(ev(i));
  let done = false;
  const waiting = recorder.recordAsync(ev(99)).then(() => (done = true));
  await jest.advanceTimersByTimeAsync(29);
  expect(done).toBe(false);
  await jest.advanceTimersByTimeAsync(1);
  await waiting;
  expect(done).toBe(true);
  expect(recorder.stats().recorded).toBe(6);
  gate.release();
});

test(
  'a store down for 5 minutes loses nothing: capped, jittered retries until it is back, one warning, reminders, ' +
    'one line on recovery',
  async () => {
    jest.useFakeTimers();
    const store = memoryStore();
    const { logger, lines } = captureLogger();
    const attemptsAt: number[] = [];
    const failed: number[] = [];
    const recorder = createRecorder({
      sink: { write: (b) => (attemptsAt.push(Date.now()), store.sink.write(b)) },
      batchSize: 10,
      maxConcurrentWrites: 1,
      flushIntervalMs: 100,
      logger,
      onFailed: (n) => failed.push(n),
    });
    store.setDown(true);
    const started = Date.now();
    for (let i = 0; i < 25; i++) recorder.record(ev(i));
    await jest.advanceTimersByTimeAsync(5 * 60_000);
    expect(recorder.stats()).toMatchObject({ stored: 0, buffered: 25, failed: 0 });
    store.setDown(false);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(recorder.stats()).toMatchObject({ recorded: 25, stored: 25, buffered: 0, failed: 0, dropped: 0 });
    expect([...store.stored.values()].map((e) => e.bytes)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(failed).toEqual([]);
    // Backoff: from 100 ms, doubling, never more than 5 s between attempts, and not all alike (jitter).
    const gaps = attemptsAt
      .slice(1)
      .map((t, i) => t - attemptsAt[i]!)
      .filter((g) => g > 0);
    expect(attemptsAt[0]).toBe(started);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(5_000);
    expect(gaps.filter((g) => g < 200).length).toBeGreaterThan(0);
    expect(new Set(gaps.filter((g) => g >= 2_500)).size).toBeGreaterThan(5);
    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns[0]!.message).toMatch(
      joinRegExp(
        /^recorder: cannot write events \(connect ECONNREFUSED 127\.0\.0\.1:5432\); /,
        /keeping them and retrying each batch for up to 15 min$/,
      ),
    );
    // A reminder a minute while it lasts, not a line per attempt.
    expect(warns.filter((l) => /still cannot write events/.test(l.message)).length).toBeGreaterThanOrEqual(4);
    expect(warns.length).toBeLessThanOrEqual(6);
    // Measured from the first failed write (at ~0.1 s) to the first success after the store is back at
    // 300 s; the jittered backoff puts that anywhere in ~[299.9, 305.1] s.
    const recovered = lines.filter(
      (l) => l.level === 'info' && /^recorder: writes succeed again after /.test(l.message),
    );
    expect(recovered).toHaveLength(1);
    const after = Number(/after ([\d.]+) s/.exec(recovered[0]!.message)?.[1]);
    expect(after).toBeGreaterThanOrEqual(299);
    expect(after).toBeLessThanOrEqual(306);
    await recorder.close();
    expectAccounted(recorder.stats());
  },
);

test(
  'without a spill, a batch still failing at retryForMs is given up: counted as failed, hooked and logged as an ' +
    'error',
  async () => {
    jest.useFakeTimers();
    const store = memoryStore();
    store.setDown(true);
    const failed: Array<[number, unknown]> = [];
    const { logger, lines } = captureLogger();
    const recorder = createRecorder({
      sink: store.sink,
      batchSize: 2,
      retryForMs: 60_000,
      flushIntervalMs: 100,
      logger,
      onFailed: (n, err) => failed.push([n, err]),
    });
    recorder.record(ev(1));
    recorder.record(ev(2));
    await jest.advanceTimersByTimeAsync(59_000);
    expect(recorder.stats()).toMatchObject({ failed: 0, buffered: 2 });
    await jest.advanceTimersByTimeAsync(1_100);
    expect(recorder.stats()).toMatchObject({ failed: 2, buffered: 0, stored: 0 });
    expect(failed).toHaveLength(1);
    expect(failed[0]![0]).toBe(2);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      'recorder: gave up 2 events: not stored within retryForMs (60000 ms) (connect ECONNREFUSED ' +
        '127.0.0.1:5432); they are not stored',
    ]);
    expectAccounted(recorder.stats());
    store.setDown(false);
    await recorder.close();
    expect(store.stored.size).toBe(0);
  },
);

test(
  'a write with no answer within writeTimeoutMs counts as failed and is retried (a frozen store is an error, not ' +
    'a hang)',
  async () => {
    jest.useFakeTimers();
    const store = memoryStore();
    let calls = 0;
    const errors: unknown[] = [];
    const recorder = createRecorder({
      sink: { write: (b) => (++calls === 1 ? new Promise(() => undefined) : store.sink.write(b)) },
      batchSize: 3,
      writeTimeoutMs: 2_000,
      logger: quiet(),
      onError: (err) => errors.push(err),
    });
    for (let i = 0; i < 3; i++) recorder.record(ev(i));
    await jest.advanceTimersByTimeAsync(1_999);
    expect(errors).toEqual([]);
    await jest.advanceTimersByTimeAsync(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(WriteTimeoutError);
    expect((errors[0] as Error).message).toBe('no answer from the store within 2000 ms (writeTimeoutMs)');
    expect(recorder.stats()).toMatchObject({ stored: 3, failed: 0 });
    await recorder.close();
  },
);

test(
  'an error the sink calls permanent is not retried: the batch is split, and only the events at fault are given ' +
    'up',
  async () => {
    const stored: unknown[] = [];
    const failed: number[] = [];
    const refuse = Object.assign(new Error('value "2147483648" is out of range for type integer'), { code: '22003' });
    const recorder = createRecorder({
      sink: {
        write: ({ events }) =>
          events.some((e) => e.bad === true)
            ? Promise.reject(refuse)
            : (stored.push(...events.map((e) => e.bytes)), Promise.resolve(ok(events.length))),
        isPermanentError: (err) => (err as { code?: string }).code === '22003',
      },
      batchSize: 8,
      logger: quiet(),
      onFailed: (n) => failed.push(n),
    });
    // A field the schema does not know: refused by the type (and, at run time, by this store).
    // @ts-expect-error -- `bad` is not an event field
    for (let i = 0; i < 8; i++) recorder.record(i === 5 ? { ...ev(i), bad: true } : ev(i));
    await recorder.close();
    expect(failed).toEqual([1]);
    expect((stored as number[]).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 6, 7]);
    expect(recorder.stats()).toMatchObject({ stored: 7, failed: 1 });
    expectAccounted(recorder.stats());
  },
);

test('rejected events are reported to the crawler (hook, stats, a log line)', async () => {
  const seen: number[] = [];
  const { logger, lines } = captureLogger();
  const recorder = createRecorder({
    sink: {
      write: ({ events: e }) =>
        Promise.resolve({
          accepted: e.length - 1,
          inserted: e.length - 1,
          duplicates: 0,
          rejected: [{ line: 2, errors: ['latencyMs: is required'] }],
        }),
    },
    onRejected: (rejected) => seen.push(...rejected.map((r) => r.line)),
    logger,
  });
  recorder.record(ev(1));
  // @ts-expect-error -- latencyMs is required: the type says so before the store does
  recorder.record({ ts: 1, site: 'a.example.com', status: 200 });
  await recorder.close();
  expect(seen).toEqual([2]);
  expect(recorder.stats()).toMatchObject({ rejected: 1, stored: 1 });
  expectAccounted(recorder.stats());
  expect(lines.map((l) => l.message)).toContain(
    'recorder: the store refused 1 invalid events (first: latencyMs: is required); they are not stored: fix ' +
      "the crawler's events (docs/events.md), or pass onRejected to handle them",
  );
});

test("a crawler's hook that throws does not break the accounting", async () => {
  const store = memoryStore();
  const { logger, lines } = captureLogger();
  const recorder = createRecorder({
    sink: store.sink,
    highWaterMark: 1,
    maxBuffered: 1,
    flushIntervalMs: 60_000,
    logger,
    onDropped: () => {
      throw new Error('oops');
    },
  });
  recorder.record(ev(1));
  expect(recorder.record(ev(2))).toBe(false);
  await recorder.close();
  expect(recorder.stats()).toMatchObject({ recorded: 1, stored: 1, dropped: 1 });
  expect(lines.some((l) => l.message === "recorder: the crawler's onDropped hook threw; ignored")).toBe(true);
});

test('bad options are refused with one line naming the option', () => {
  const sink = memoryStore().sink;
  expect(() => createRecorder({ sink, batchSize: 0 })).toThrow(
    /^createRecorder: batchSize: must be at least 1 \(got 0\)$/,
  );
  expect(() => createRecorder({ sink, retryForMs: 1.5 })).toThrow(
    /^createRecorder: retryForMs: must be a whole number \(got 1\.5\)$/,
  );
  expect(() => createRecorder({ sink, highWaterMark: 10, maxBuffered: 5 })).toThrow(
    /^createRecorder: maxBuffered: must be at least highWaterMark \(10\) \(got 5\)$/,
  );
  expect(() => createRecorder({ sink, maxAttempts: 5 } as never)).toThrow(
    /^createRecorder: maxAttempts: unknown option \(maxAttempts was replaced by retryForMs/,
  );
  expect(() => createRecorder({ sink: {} as EventSink })).toThrow(/^createRecorder: sink: must be an EventSink/);
  expect(() => createRecorder({ sink, spillDir: '' })).toThrow(/^createRecorder: spillDir: must name a directory/);
});
