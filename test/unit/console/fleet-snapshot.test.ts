/**
 * The Fleet page's snapshot: a read answers requests for `maxAgeMs`, then at once up to `staleMs` while a new
 * read is made behind it; requests during a read share it; a control change drops what was kept (and a read
 * begun before it is not kept); the stream's refresh reads anew.
 */
import { FleetSnapshot, type KeptFleet } from '../../../client/console/fleet-snapshot';
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
    staleMs: 60_000,
    now: () => clock,
  });
  return {
    snapshot,
    tick: (ms: number) => (clock += ms),
    finish: (name: string) => pending.shift()!(fleetOf(name)),
    pending: () => pending.length,
  };
}

const siteOf = async (p: Promise<Fleet | KeptFleet>): Promise<string> => {
  const got = await p;
  return ('fleet' in got ? got.fleet : got).sites[0]!.site;
};

test('requests during a read share it; a read answers for maxAgeMs, then at once while a new one is made', async () => {
  const t = snapshotOver();
  const a = t.snapshot.get();
  const b = t.snapshot.get();
  expect(t.pending()).toBe(1);
  t.finish('one.example.com');
  expect([await siteOf(a), await siteOf(b)]).toEqual(['one.example.com', 'one.example.com']);
  t.tick(4_999);
  expect(await siteOf(t.snapshot.get())).toBe('one.example.com');
  expect(t.snapshot.reads).toBe(1);
  // Older than maxAgeMs: the kept read answers at once (with its time), and a new read begins behind it.
  t.tick(1);
  const c = await t.snapshot.get();
  expect([c.fleet.sites[0]!.site, c.readAt]).toEqual(['one.example.com', 0]);
  expect(t.pending()).toBe(1);
  t.finish('two.example.com');
  await Promise.resolve();
  expect(await siteOf(t.snapshot.get())).toBe('two.example.com');
  expect(t.snapshot.reads).toBe(2);
});

test('a read older than staleMs answers nothing: the request waits for a new one', async () => {
  const t = snapshotOver();
  const a = t.snapshot.get();
  t.finish('old.example.com');
  await a;
  t.tick(60_000);
  const b = t.snapshot.get();
  expect(t.pending()).toBe(1);
  t.finish('new.example.com');
  expect(await b).toMatchObject({ readAt: 60_000 });
  expect(await siteOf(b)).toBe('new.example.com');
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
    staleMs: 60_000,
  });
  await expect(snapshot.get()).rejects.toThrow('visibility down');
  expect(await siteOf(snapshot.get())).toBe('ok.example.com');
});

test('settled waits for every read still running, also one a control change left behind', async () => {
  const t = snapshotOver();
  const first = t.snapshot.read();
  t.snapshot.invalidate();
  const second = t.snapshot.read();
  let settled = false;
  const waiting = t.snapshot.settled().then(() => (settled = true));
  t.finish('one.example.com');
  await first;
  await Promise.resolve();
  expect(settled).toBe(false);
  t.finish('two.example.com');
  await second;
  await waiting;
  expect(settled).toBe(true);
});
