/**
 * The Fleet page's snapshot: a read answers requests for `maxAgeMs`, requests during a read share it, a
 * control change drops what was kept (and a read begun before it is not kept), the stream's refresh reads anew.
 */
import { FleetSnapshot } from '../../../client/console/fleet-snapshot';
import { buildFleet, type Fleet } from '../../../server/fleet/fleet';
import { row } from './fleet-rows';

const ALL: Fleet['filter'] = { bands: null, awaiting: false, site: [] };
const fleetOf = (name: string): Fleet => buildFleet([row(name)], ALL, new Date('2026-12-04T12:00:00Z'));

/** A snapshot over reads the test ends by hand, on a clock it moves. */
function snapshotOver() {
  let clock = 0;
  const pending: Array<(f: Fleet) => void> = [];
  const snapshot = new FleetSnapshot({
    readAll: () => new Promise<Fleet>((resolve) => pending.push(resolve)),
    maxAgeMs: 5_000,
    now: () => clock,
  });
  return {
    snapshot,
    tick: (ms: number) => (clock += ms),
    finish: (name: string) => pending.shift()!(fleetOf(name)),
    pending: () => pending.length,
  };
}

const siteOf = async (p: Promise<Fleet>): Promise<string> => (await p).sites[0]!.site;

test('requests during a read share it; a read answers for maxAgeMs, then a new one is made', async () => {
  const t = snapshotOver();
  const a = t.snapshot.get();
  const b = t.snapshot.get();
  expect(t.pending()).toBe(1);
  t.finish('one.example.com');
  expect([await siteOf(a), await siteOf(b)]).toEqual(['one.example.com', 'one.example.com']);
  t.tick(4_999);
  expect(await siteOf(t.snapshot.get())).toBe('one.example.com');
  expect(t.snapshot.reads).toBe(1);
  t.tick(1);
  const c = t.snapshot.get();
  expect(t.pending()).toBe(1);
  t.finish('two.example.com');
  expect(await siteOf(c)).toBe('two.example.com');
  expect(t.snapshot.reads).toBe(2);
});

test('a control change drops the kept read, and a read begun before it is neither kept nor joined', async () => {
  const t = snapshotOver();
  const first = t.snapshot.get();
  t.finish('before.example.com');
  await first;
  const running = t.snapshot.read();
  t.snapshot.invalidate();
  // The next request does not join the read begun before the change.
  const after = t.snapshot.get();
  expect(t.pending()).toBe(2);
  t.finish('stale.example.com');
  t.finish('after.example.com');
  expect(await siteOf(running)).toBe('stale.example.com');
  expect(await siteOf(after)).toBe('after.example.com');
  // What is kept is the read begun after the change.
  expect(await siteOf(t.snapshot.get())).toBe('after.example.com');
  expect(t.snapshot.reads).toBe(3);
});

test("the stream's refresh reads anew even when a kept read is young", async () => {
  const t = snapshotOver();
  const first = t.snapshot.get();
  t.finish('old.example.com');
  await first;
  const fresh = t.snapshot.read();
  expect(t.pending()).toBe(1);
  t.finish('new.example.com');
  expect(await siteOf(fresh)).toBe('new.example.com');
  expect(await siteOf(t.snapshot.get())).toBe('new.example.com');
});

test('a failed read is not kept: the next request tries again', async () => {
  let calls = 0;
  const snapshot = new FleetSnapshot({
    readAll: () =>
      ++calls === 1 ? Promise.reject(new Error('visibility down')) : Promise.resolve(fleetOf('ok.example.com')),
    maxAgeMs: 5_000,
  });
  await expect(snapshot.get()).rejects.toThrow('visibility down');
  expect(await siteOf(snapshot.get())).toBe('ok.example.com');
});
