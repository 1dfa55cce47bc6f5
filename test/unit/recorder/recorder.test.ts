/**
 * The recorder's contract with a crawler, against an in-memory sink (the sink is the unit's only
 * collaborator; the PostgreSQL sink is covered in test/integration/recorder.test.ts).
 */
import { createRecorder, type EventSink } from '../../../recorder';
import type { IngestResult } from '../../../db/signal-store/types';

const ok = (n: number): IngestResult => ({ accepted: n, inserted: n, duplicates: 0, rejected: [] });

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

const ev = (i: number) => ({ ts: 1_700_000_000_000 + i, site: 'a.example.com', status: 200, latencyMs: 1 });

test('batches by size, gives every event an id (without touching the event), and flushes the rest on close', async () => {
  const written: Record<string, unknown>[][] = [];
  const writtenIds: string[][] = [];
  const recorder = createRecorder({
    sink: { write: ({ events: e, eventIds: ids }) => (written.push([...e]), writtenIds.push([...ids]), Promise.resolve(ok(e.length))) },
    batchSize: 3,
    flushIntervalMs: 60_000,
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
  expect(recorder.stats()).toMatchObject({ recorded: 7, stored: 7, buffered: 0, dropped: 0 });
});

test('keeps an id the crawler gave', async () => {
  const writtenIds: string[] = [];
  const recorder = createRecorder({ sink: { write: ({ events: e, eventIds: ids }) => (writtenIds.push(...ids), Promise.resolve(ok(e.length))) } });
  recorder.record({ ...ev(1), eventId: 'mine-1' });
  recorder.record(ev(2));
  await recorder.close();
  expect(writtenIds[0]).toBe('mine-1');
  expect(writtenIds[1]).toMatch(/^[A-Za-z0-9_-]{16}-[0-9a-z]{10}$/);
});

test('backpressure: record() turns false at the high-water mark, drain() resolves below it, and past twice it drops (counted)', async () => {
  const gate = gatedSink();
  const drops: number[] = [];
  const recorder = createRecorder({ sink: gate.sink, batchSize: 10, highWaterMark: 20, flushIntervalMs: 60_000, onDrop: (n) => drops.push(n) });
  const results = Array.from({ length: 45 }, (_, i) => recorder.record(ev(i)));
  expect(results.slice(0, 19).every(Boolean)).toBe(true);
  expect(results[19]).toBe(false);
  expect(recorder.stats()).toMatchObject({ recorded: 40, dropped: 5, buffered: 40 });
  expect(drops).toHaveLength(5);
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
  expect(recorder.stats()).toMatchObject({ stored: 40, buffered: 0 });
});

test('recordAsync waits for room at most maxWaitMs, so the crawler never stalls for long', async () => {
  jest.useFakeTimers();
  try {
    const gate = gatedSink();
    const recorder = createRecorder({ sink: gate.sink, batchSize: 5, highWaterMark: 5, maxWaitMs: 30, flushIntervalMs: 60_000 });
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
  } finally {
    jest.useRealTimers();
  }
});

test('a failing sink is retried; a batch that keeps failing is counted as failed, not lost silently', async () => {
  let calls = 0;
  const errors: number[] = [];
  const flaky = createRecorder({
    sink: { write: async ({ events: e }) => (++calls < 3 ? Promise.reject(new Error('connection reset')) : ok(e.length)) },
    maxAttempts: 5,
    onError: (_err, attempt) => errors.push(attempt),
  });
  flaky.record(ev(1));
  await flaky.close();
  expect(errors).toEqual([1, 2]);
  expect(flaky.stats()).toMatchObject({ stored: 1, failed: 0 });

  const dead = createRecorder({ sink: { write: () => Promise.reject(new Error('down')) }, maxAttempts: 2 });
  dead.record(ev(1));
  dead.record(ev(2));
  await dead.close();
  expect(dead.stats()).toMatchObject({ stored: 0, failed: 2 });
});

test('rejected events are reported to the crawler', async () => {
  const seen: number[] = [];
  const recorder = createRecorder({
    sink: { write: ({ events: e }) => Promise.resolve({ accepted: e.length - 1, inserted: e.length - 1, duplicates: 0, rejected: [{ line: 2, errors: ['latencyMs: is required'] }] }) },
    onRejected: (rejected) => seen.push(...rejected.map((r) => r.line)),
  });
  recorder.record(ev(1));
  recorder.record({ ts: 1, site: 'a.example.com', status: 200 });
  await recorder.close();
  expect(seen).toEqual([2]);
  expect(recorder.stats()).toMatchObject({ rejected: 1, stored: 1 });
});
