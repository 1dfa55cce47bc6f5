/**
 * The recorder with a spill directory (a real temporary directory; the sink is an in-memory store that
 * can be switched down): overflow to disk before dropping, deadline and close() move batches to disk,
 * a later recorder on the same directory sends what an earlier one left, including after a crash.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRecorder, type Recorder } from '../../../server/compat/recorder';
import { captureLogger, ev, expectAccounted, memoryStore, until } from './helpers';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'recorder-spill-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const segments = (d: string) => readdirSync(d).filter((n) => n.endsWith('.ndjson'));
const linesOnDisk = (d: string) =>
  segments(d).reduce((n, f) => n + readFileSync(join(d, f), 'utf8').split('\n').filter(Boolean).length, 0);
/** Fast retries: these tests wait on conditions with real timers. */
const fast = { retryInitialDelayMs: 1, retryMaxDelayMs: 20, flushIntervalMs: 10 } as const;

test(
  'memory full during an outage: events go to disk (record() true while the spill has room, false past half of ' +
    'it, dropped only when full), then all are stored once',
  async () => {
    const store = memoryStore();
    store.setDown(true);
    const { logger, lines } = captureLogger();
    const dropReasons: string[] = [];
    const recorder = createRecorder({
      sink: store.sink,
      batchSize: 10,
      highWaterMark: 20,
      maxBuffered: 20,
      spillDir: dir,
      maxSpillBytes: 20_000,
      logger,
      onDropped: (_n, why) => dropReasons.push(why),
      ...fast,
    });
    const accepted: number[] = [];
    const results: boolean[] = [];
    let i = 0;
    // Record until the first drop: every event before it was kept (in memory or on disk).
    while (recorder.stats().dropped === 0) {
      const before = recorder.stats().dropped;
      results.push(recorder.record(ev(i)));
      if (recorder.stats().dropped === before) accepted.push(i);
      i += 1;
    }
    const firstFalse = results.indexOf(false);
    expect(firstFalse).toBeGreaterThan(20);
    expect(results.slice(0, firstFalse).every(Boolean)).toBe(true);
    expect(recorder.stats().spillBytes).toBeGreaterThan(19_000);
    expect(recorder.stats()).toMatchObject({ buffered: 20, dropped: 1, failed: 0, stored: 0 });
    expect(recorder.stats().spilled).toBe(accepted.length - 20);
    expect(dropReasons).toEqual(['memory and spill directory full (maxSpillBytes 20000)']);
    expectAccounted(recorder.stats());
    await until(() => linesOnDisk(dir) === accepted.length - 20, 'the spill written to disk');
    expect(lines.filter((l) => /memory full; keeping further events on disk in /.test(l.message))).toHaveLength(1);

    store.setDown(false);
    await until(() => recorder.stats().spilled === 0 && recorder.stats().buffered === 0, 'memory and spill sent');
    await recorder.close();
    expect(recorder.stats()).toMatchObject({
      recorded: accepted.length,
      stored: accepted.length,
      dropped: 1,
      failed: 0,
      spilled: 0,
      spillBytes: 0,
    });
    expect([...store.stored.values()].map((e) => e.bytes as number).sort((a, b) => a - b)).toEqual(accepted);
    expect(segments(dir)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    expect(lines.some((l) => l.level === 'info' && l.message === 'recorder: every event kept on disk is sent')).toBe(
      true,
    );
  },
);

test('a batch still failing at retryForMs goes to disk instead of being given up', async () => {
  const store = memoryStore();
  store.setDown(true);
  const recorder = createRecorder({
    sink: store.sink,
    batchSize: 5,
    retryForMs: 50,
    spillDir: dir,
    logger: captureLogger().logger,
    ...fast,
  });
  for (let i = 0; i < 5; i++) recorder.record(ev(i));
  await until(() => recorder.stats().spilled === 5, 'the batch spilled at its deadline');
  expect(recorder.stats()).toMatchObject({ buffered: 0, failed: 0 });
  store.setDown(false);
  await until(() => recorder.stats().stored === 5, 'the spilled batch stored');
  await recorder.close();
  expect(recorder.stats()).toMatchObject({ stored: 5, failed: 0, spilled: 0 });
  expect(store.stored.size).toBe(5);
});

test(
  'close() during an outage puts memory on disk and returns; a recorder started on the directory sends it (same ' +
    'ids)',
  async () => {
    const store = memoryStore();
    store.setDown(true);
    const { logger, lines } = captureLogger();
    const first = createRecorder({ sink: store.sink, batchSize: 10, spillDir: dir, logger, ...fast });
    const events = Array.from({ length: 30 }, (_, i) => ev(i));
    for (const e of events) first.record(e);
    // No 15-minute wait: a failed write during close() goes to disk at once.
    await first.close();
    expect(first.stats()).toMatchObject({ recorded: 30, buffered: 0, spilled: 30, failed: 0, stored: 0 });
    expectAccounted(first.stats());
    expect(lines.map((l) => l.message)).toContain(
      `recorder: closed with 30 events not yet sent, kept on disk in ${dir}; a recorder started with that ` +
        `spillDir sends them`,
    );
    expect(linesOnDisk(dir)).toBe(30);
    const idsOnDisk = segments(dir).flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id),
    );

    store.setDown(false);
    const second = createRecorder({
      sink: store.sink,
      batchSize: 10,
      spillDir: dir,
      logger: captureLogger().logger,
      ...fast,
    });
    expect(second.stats()).toMatchObject({ recovered: 30, spilled: 30, recorded: 0 });
    await until(() => second.stats().spilled === 0, 'the recovered spill sent');
    await second.close();
    expect(second.stats()).toMatchObject({ recovered: 30, stored: 30, failed: 0 });
    expectAccounted(second.stats());
    expect([...store.stored.keys()].sort()).toEqual([...idsOnDisk].sort());
    expect([...store.stored.values()].map((e) => e.bytes as number).sort((a, b) => a - b)).toEqual(
      events.map((e) => e.bytes),
    );
    expect(segments(dir)).toEqual([]);
  },
);

test(
  'after a crash: the stale lock is taken over, whole lines are sent, a repeat is not stored twice, a torn last ' +
    'line is counted as failed and reported',
  async () => {
    const store = memoryStore();
    // What a crashed recorder leaves: its lock (its pid is gone) and a segment cut in the middle of a line.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(join(dir, '.lock'), `${gone}\n`);
    const line = (id: string, i: number) => JSON.stringify({ id, event: ev(i) });
    writeFileSync(
      join(dir, '000000000007.ndjson'),
      `${line('r-1', 1)}\n${line('r-2', 2)}\n${line('r-3', 3)}\n{"id":"r-4","ev`,
    );
    // r-1 was stored before the crash; the segment was not deleted yet.
    await store.sink.write({ events: [ev(1)], eventIds: ['r-1'] });
    const failed: number[] = [];
    const { logger, lines } = captureLogger();
    const recorder = createRecorder({
      sink: store.sink,
      spillDir: dir,
      logger,
      onFailed: (n) => failed.push(n),
      ...fast,
    });
    expect(recorder.stats()).toMatchObject({ recovered: 4, spilled: 4 });
    await until(() => recorder.stats().spilled === 0, 'the recovered segment sent');
    // A new segment continues the numbering, it never reuses a name.
    recorder.record(ev(9));
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ recovered: 4, recorded: 1, stored: 3, duplicates: 1, failed: 1 });
    expectAccounted(recorder.stats());
    expect([...store.stored.keys()].filter((k) => k.startsWith('r-')).sort()).toEqual(['r-1', 'r-2', 'r-3']);
    expect(failed).toEqual([1]);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      `recorder: gave up 1 events: lines of 000000000007.ndjson in ${dir} could not be read back (cut short by a ` +
        `crash?) (unreadable line); they are not stored`,
    ]);
    expect(readdirSync(dir)).toEqual([]);
  },
);

test(
  'one recorder per directory: a second one in this process, or one while another live process holds it, is ' +
    'refused by name',
  async () => {
    const store = memoryStore();
    const first = createRecorder({ sink: store.sink, spillDir: dir, logger: captureLogger().logger });
    expect(() => createRecorder({ sink: store.sink, spillDir: dir })).toThrow(
      `spillDir: ${dir} is already used by another recorder in this process; give each recorder its own directory`,
    );
    await first.close();
    // Jest's parent process is alive and is not this one.
    writeFileSync(join(dir, '.lock'), `${process.ppid}\n`);
    expect(() => createRecorder({ sink: store.sink, spillDir: dir })).toThrow(
      `spillDir: ${dir} is in use by process ${process.ppid} (another recorder); give each recorder its own ` +
        `directory, or delete ${join(dir, '.lock')} if that process is not one`,
    );
    rmSync(join(dir, '.lock'));
    const again: Recorder = createRecorder({ sink: store.sink, spillDir: dir, logger: captureLogger().logger });
    await again.close();
  },
);

test('a spill directory that cannot be made is refused with one line', () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  expect(() => createRecorder({ sink: memoryStore().sink, spillDir: join(file, 'spill') })).toThrow(
    new RegExp(
      `^spillDir: cannot use ${join(file, 'spill').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(ENOTDIR: .*\\); ` +
        `pass a directory the crawler can create and write$`,
    ),
  );
});
