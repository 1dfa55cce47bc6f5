import { FleetHub, type FleetStream, narrowFleet } from '../../../client/console/fleet-hub';
import { SseConnection } from '../../../server/api/sse';
import { buildFleet, type Fleet } from '../../../server/fleet/fleet';
import type { SiteSummary } from '../../../server/api/schemas/sites';
import { testLogger } from '../../kit/services';

import { row } from './fleet-rows';

const now = new Date('2026-12-04T12:00:00Z');
const ALL: Fleet['filter'] = { bands: null, awaiting: false, site: [] };
const fleetOf = (rows: SiteSummary[]): Fleet => {
  const f = buildFleet(rows, ALL, now);
  return { ...f, sites: f.sites.map((s) => ({ ...s, trend: [50, 60, null] })) };
};

/** The events written to a stream, parsed from its text. */
function eventsOf(sse: SseConnection): Array<{ event: string; data: { html?: string; why?: string } }> {
  const text = String(sse.stream.read() ?? '');
  return text
    .split('\n\n')
    .filter((block) => block.includes('event: '))
    .map((block) => ({
      event: /event: (\S+)/.exec(block)![1]!,
      data: JSON.parse(/data: (.*)/.exec(block)![1]!) as { html?: string; why?: string },
    }));
}

function hubOver(fleet: () => Fleet, live: () => Set<string>) {
  let changed: () => void = () => undefined;
  const hub = new FleetHub({
    readAll: () => Promise.resolve(fleet()),
    liveSessions: () => Promise.resolve(live()),
    onControlsChange: (listener) => {
      changed = listener;
      return () => (changed = () => undefined);
    },
    logger: testLogger,
    refreshMs: 3_600_000,
    now: () => now,
  });
  return { hub, change: () => changed() };
}

const settle = async (hub: FleetHub) => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  hub.refresh();
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** A stream as the route makes one: it leaves the hub when its connection closes. */
function streamOf(hub: FleetHub, filter: Fleet['filter'], sessionHash = 'aa'): FleetStream {
  const stream: FleetStream = {
    sse: new SseConnection({ heartbeatMs: 3_600_000, onClose: () => hub.remove(stream) }),
    filter,
    sessionHash,
    seq: 0,
  };
  return stream;
}

test("narrowing the whole fleet applies a stream's filters and keeps each site's trend", () => {
  const all = fleetOf([row('a.example.com'), row('b.example.com', { band: 'resisting', score: 10 })]);
  const narrowed = narrowFleet(all, { bands: ['resisting'], awaiting: false, site: [] }, now);
  expect(narrowed.sites.map((s) => [s.site, s.trend])).toEqual([['b.example.com', [50, 60, null]]]);
  expect(narrowed.counts.resisting).toBe(1);
  expect(narrowed.counts.healthy).toBe(0);
});

test('a stream gets the results as escaped HTML, then only what changed, each filtered its own way', async () => {
  const hostile = row('x.example.com', {
    band: 'degrading',
    lastChange: {
      at: '2026-12-04T11:00:00Z',
      actor: 'control-loop',
      change: 'throttled',
      reason: '<img src=x>',
      version: 2,
    },
  });
  const same = fleetOf([row('a.example.com'), hostile]);
  const moved = fleetOf([row('a.example.com', { band: 'resisting', score: 5 }), hostile]);
  let current = same;
  const { hub, change } = hubOver(
    () => current,
    () => new Set(['aa']),
  );
  const everything = streamOf(hub, ALL);
  const onlyX = streamOf(hub, { bands: null, awaiting: false, site: ['x.*'] });
  hub.add(everything);
  hub.add(onlyX);
  await settle(hub);
  const first = eventsOf(everything.sse);
  expect(first.map((e) => e.event)).toEqual(['fleet']);
  expect(first[0]!.data.html).toContain('&lt;img src=x&gt;');
  expect(first[0]!.data.html).not.toContain('<img');
  expect(first[0]!.data.html).toMatch(/^<p role="status">2 sites: /);
  expect(eventsOf(onlyX.sse)[0]!.data.html).toMatch(/^<p role="status">1 site: /);
  // A control change: the fleet is read again; a.example.com moved, so only the stream that shows it hears.
  current = moved;
  change();
  await new Promise((r) => setTimeout(r, 300));
  await settle(hub);
  const second = eventsOf(everything.sse);
  expect(second).toHaveLength(1);
  expect(second[0]!.data.html).toContain('<span class="band-resisting">');
  expect(eventsOf(onlyX.sse)).toEqual([]);
  hub.close();
});

test('one read of the fleet per refresh, whatever the number of streams; none without a stream', async () => {
  const fleet = fleetOf([row('a.example.com')]);
  const { hub } = hubOver(
    () => fleet,
    () => new Set(['aa']),
  );
  const streams = Array.from({ length: 5 }, () => streamOf(hub, ALL));
  streams.forEach((s) => hub.add(s));
  await settle(hub);
  const reads = hub.reads;
  expect(reads).toBeLessThanOrEqual(3);
  hub.refresh();
  await settle(hub);
  expect(hub.reads - reads).toBeLessThanOrEqual(2);
  streams.forEach((s) => s.sse.end());
  expect(hub.size).toBe(0);
  const before = hub.reads;
  hub.refresh();
  await settle(hub);
  expect(hub.reads).toBe(before);
});

test('a stream whose session ended is told so and closed; the others go on', async () => {
  let live = new Set(['aa', 'bb']);
  const fleet = fleetOf([row('a.example.com')]);
  const { hub } = hubOver(
    () => fleet,
    () => live,
  );
  const mine = streamOf(hub, ALL, 'aa');
  const theirs = streamOf(hub, ALL, 'bb');
  hub.add(mine);
  hub.add(theirs);
  await settle(hub);
  eventsOf(mine.sse);
  live = new Set(['bb']);
  await settle(hub);
  expect(eventsOf(mine.sse)).toEqual([{ event: 'end', data: { why: 'Your session ended (signed out or expired).' } }]);
  expect(mine.sse.closed).toBe(true);
  expect(theirs.sse.closed).toBe(false);
  hub.close();
});
