/**
 * The CLI's orchestration of its worker threads, with stand-in workers (the real one, which needs a
 * database, is covered by test/integration/ingest-cli.test.ts): results that come back out of order
 * are reported in line order, and a worker that crashes fails the run instead of hanging it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { MAX_BATCH_CHARS, ingestStream } from '../../../server/ingest/ingest-stream';
import type { RejectedLine } from '../../../server/db/signal-store/types';

const dir = mkdtempSync(join(tmpdir(), 'th-ingest-stream-'));

function workerScript(name: string, onBatch: string): string {
  const file = join(dir, `${name}.js`);
  writeFileSync(
    file,
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', (m) => {
       if (m.type === 'close') return parentPort.close();
       ${onBatch}
     });`,
  );
  return file;
}

/** Answers after a random delay, so batches finish out of order; lines that read "bad" are rejected. */
const SLOW_RANDOM = workerScript(
  'slow-random',
  `const rejected = m.lines.flatMap((l, i) => (l === 'bad' ? [{ line: m.firstLine + i, errors: ['bad line'] }] : []));
   const blank = m.lines.filter((l) => l === '').length;
   const accepted = m.lines.length - rejected.length - blank;
   const done = {
     type: 'done', seq: m.seq, lines: m.lines.length, blank, accepted, inserted: accepted, duplicates: 0, rejected,
   };
   setTimeout(() => parentPort.postMessage(done), Math.random() * 15);`,
);

const CRASHES_ON_SECOND_BATCH = workerScript(
  'crash',
  `if (m.seq >= 1) throw new Error('worker blew up'); parentPort.postMessage({ type: 'done', seq: m.seq, ` +
    `lines: m.lines.length, blank: 0, accepted: m.lines.length, inserted: m.lines.length, duplicates: 0, ` +
    `rejected: [] });`,
);

/** Reports each batch as one "rejected" entry: its first line, its line count and its characters. */
const REPORTS_BATCHES = workerScript(
  'reports-batches',
  `const chars = m.lines.reduce((n, l) => n + (typeof l === 'string' ? l.length : 0), 0);
   const count = m.lines.length;
   const rejected = [{ line: m.firstLine, errors: [count + ' ' + chars] }];
   parentPort.postMessage({
     type: 'done', seq: m.seq, lines: count, blank: 0, accepted: count, inserted: count, duplicates: 0, rejected,
   });`,
);

test('batches are cut by size as well as by line count: large lines never pile up', async () => {
  const line = `{"bodySample":"${'x'.repeat(900_000)}"}`;
  const lines = [...Array.from({ length: 20 }, () => line), ...Array.from({ length: 30 }, (_, i) => `{"n":${i}}`)];
  const batches: Array<{ first: number; lines: number; chars: number }> = [];
  const summary = await ingestStream(Readable.from([Buffer.from(lines.join('\n'))]), {
    databaseUrl: null,
    batchSize: 25,
    workers: 2,
    workerScript: REPORTS_BATCHES,
    onRejected: (r) => {
      const [n, chars] = r.errors[0]!.split(' ').map(Number);
      batches.push({ first: r.line, lines: n!, chars: chars! });
    },
  });
  expect(summary.lines).toBe(50);
  expect(batches.reduce((n, b) => n + b.lines, 0)).toBe(50);
  for (const b of batches) expect(b.chars).toBeLessThan(MAX_BATCH_CHARS + line.length);
  // 20 lines of 0.9 MB (18 MB) make at least four batches; the small lines go by count (25 at most).
  expect(batches.filter((b) => b.first <= 20).length).toBeGreaterThanOrEqual(4);
  expect(Math.max(...batches.map((b) => b.lines))).toBeLessThanOrEqual(25);
});

test('results finishing out of order are reported in line order, with the right line numbers and totals', async () => {
  const lines = Array.from({ length: 500 }, (_, i) => (i % 37 === 5 ? 'bad' : i % 101 === 0 ? '' : `{"n":${i}}`));
  const reported: RejectedLine[] = [];
  const progress: number[] = [];
  const summary = await ingestStream(Readable.from([`${lines.join('\r\n')}\n`]), {
    databaseUrl: null,
    batchSize: 7,
    workers: 3,
    workerScript: SLOW_RANDOM,
    onRejected: (r) => reported.push(r),
    onProgress: (_, done) => progress.push(done),
  });
  const bad = lines.flatMap((l, i) => (l === 'bad' ? [i + 1] : []));
  expect(reported.map((r) => r.line)).toEqual(bad);
  expect(summary).toMatchObject({
    lines: 500,
    rejected: bad.length,
    blank: 5,
    accepted: 500 - bad.length - 5,
    inserted: 500 - bad.length - 5,
  });
  expect(progress).toEqual([...progress].sort((a, b) => a - b));
  expect(progress.at(-1)).toBe(500);
});

test('a worker that crashes fails the run with its error (no hang, no silent success)', async () => {
  const lines = Array.from({ length: 100 }, (_, i) => `{"n":${i}}`);
  const run = ingestStream(Readable.from([lines.join('\n')]), {
    databaseUrl: null,
    batchSize: 10,
    workers: 2,
    workerScript: CRASHES_ON_SECOND_BATCH,
    onRejected: () => undefined,
  });
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('ingestStream did not settle within 3 s')), 3_000);
  });
  await expect(Promise.race([run, hung]).finally(() => clearTimeout(timer))).rejects.toThrow('worker blew up');
});
