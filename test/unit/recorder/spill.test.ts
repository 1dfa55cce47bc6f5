/** The spill's segment files on a real temporary directory: order, rotation, accounting, what it refuses. */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Spill } from '@target-health/crawler/recorder/spill';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'spill-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const noWriteErrors = () => {
  throw new Error('no write error expected');
};

test('segments rotate at their size and come back oldest first, every event once, in order', async () => {
  const spill = Spill.open(dir, { maxBytes: 1_000_000, segmentBytes: 300, onWriteError: noWriteErrors });
  for (let i = 0; i < 20; i++) expect(spill.append(`id-${i}`, { n: i, text: 'x'.repeat(20) })).toBe('ok');
  expect(spill.events).toBe(20);
  const seen: number[] = [];
  let taken = 0;
  for (let s = await spill.takeOldest(); s; s = await spill.takeOldest()) {
    taken += 1;
    expect(s.unreadable).toBe(0);
    seen.push(...s.events.map((e) => e.event.n as number));
    expect(s.events.every((e) => e.id === `id-${String(e.event.n)}`)).toBe(true);
    spill.settle(s.events.length);
    await spill.remove(s);
  }
  expect(taken).toBeGreaterThan(3);
  expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
  expect({ events: spill.events, bytes: spill.bytes }).toEqual({ events: 0, bytes: 0 });
  await spill.close();
  expect(readdirSync(dir)).toEqual([]);
});

test(
  'counts what an earlier run left (non-empty lines, ' + 'a torn last one included), and numbers new segments after it',
  async () => {
    writeFileSync(
      join(dir, '000000000003.ndjson'),
      '{"id":"a","event":{"n":1}}\n\n{"id":"b","event":{"n":2}}\n{"id":"c"',
    );
    writeFileSync(join(dir, '000000000004.ndjson'), '');
    writeFileSync(join(dir, 'notes.txt'), 'not a segment');
    const spill = Spill.open(dir, { maxBytes: 1_000_000, onWriteError: noWriteErrors });
    expect(spill.events).toBe(3);
    // The empty segment is removed at open; other files are left alone.
    expect(readdirSync(dir).sort()).toEqual(['.lock', '000000000003.ndjson', 'notes.txt']);
    spill.append('d', { n: 4 });
    const first = (await spill.takeOldest())!;
    expect(first.name).toBe('000000000003.ndjson');
    expect(first.events.map((e) => e.id)).toEqual(['a', 'b']);
    expect(first.unreadable).toBe(1);
    spill.settle(3);
    await spill.remove(first);
    const second = (await spill.takeOldest())!;
    expect(second.name).toBe('000000000005.ndjson');
    expect(second.events).toEqual([{ id: 'd', event: { n: 4 } }]);
    spill.settle(1);
    await spill.remove(second);
    await spill.close();
  },
);

test('refuses what does not fit in maxBytes, and what JSON cannot hold', async () => {
  const spill = Spill.open(dir, { maxBytes: 100, onWriteError: noWriteErrors });
  expect(spill.append('a', { text: 'x'.repeat(40) })).toBe('ok');
  expect(spill.append('b', { text: 'x'.repeat(40) })).toBe('full');
  expect(spill.append('c', { n: 1n })).toBe('unserialisable');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  expect(spill.append('d', cyclic)).toBe('unserialisable');
  expect(spill.events).toBe(1);
  await spill.close();
  // Closed: nothing more is taken.
  expect(spill.append('e', {})).toBe('full');
});

test(
  'a segment put back (close() while the store is down) ' + 'stays on disk with only its unsent events counted',
  async () => {
    const spill = Spill.open(dir, { maxBytes: 1_000_000, onWriteError: noWriteErrors });
    for (let i = 0; i < 4; i++) spill.append(`id-${i}`, { n: i });
    const s = (await spill.takeOldest())!;
    spill.settle(2);
    spill.putBack(s, 2);
    expect(spill.events).toBe(2);
    await spill.close();
    expect(readdirSync(dir)).toEqual(['000000000001.ndjson']);
  },
);
