/**
 * The controls client (target-health/controls) against the real API and PostgreSQL: the snapshot, changes
 * by version, any spelling of a site, resuming with Last-Event-ID after the connection is cut, a fresh
 * snapshot from a restarted API, the fail-safe while the API is down, a silent stream taken for dead,
 * `unknownSite: 'pause'`, and clear errors for a bad token, a token without `read`, and a wrong URL.
 * Changes are written by the product's own writer (server/db/controls.ts writeControls, as the action activity).
 *
 * Between the client and the API sits a TCP relay of the test (not a mock: it forwards bytes) that can cut
 * connections, refuse new ones, freeze, and forward to a restarted API behind the same address.
 */
import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createControlsClient, type ControlsClient, type SiteControls } from '../../server/compat/controls';
import type { RecorderLogger } from '../../server/compat/recorder';
import { startTestApi, type TestApi } from '../kit/api';
import { eventually, openHarness, type TestHarness } from '../kit/services';
import { changeControls as change } from '../kit/controls';
import { joinRegExp } from '../kit/regexp';

/** A TCP relay on a fixed port to a target that can change (a restarted API). */
interface Relay {
  url: string;
  target: number;
  /** Destroys the open connections (the client sees its stream break). */
  cut(): void;
  /** Stops accepting (connections refused) and cuts the open ones. */
  stop(): Promise<void>;
  /** Accepts again, on the same port. */
  start(): Promise<void>;
  /** Open connections stop forwarding anything (a NAT that dropped the flow); new ones work. */
  freeze(): void;
  close(): Promise<void>;
}

async function startRelay(target: number): Promise<Relay> {
  const open = new Set<Socket>();
  const frozen = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((inbound) => {
        const outbound = connect(relay.target, '127.0.0.1');
        for (const sock of [inbound, outbound]) {
          open.add(sock);
          sock.on('error', () => undefined);
          sock.on('close', () => {
            open.delete(sock);
            inbound.destroy();
            outbound.destroy();
          });
        }
        inbound.on('data', (d) => void (frozen.has(inbound) || outbound.write(d)));
        outbound.on('data', (d) => void (frozen.has(inbound) || inbound.write(d)));
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const cut = () => {
    for (const sock of open) sock.destroy();
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    cut();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  const relay: Relay = {
    url: '',
    target,
    cut,
    stop,
    start: listen,
    freeze: () => {
      for (const sock of open) frozen.add(sock);
    },
    close: stop,
  };
  await listen();
  relay.url = `http://127.0.0.1:${port}`;
  return relay;
}

const portOf = (url: string) => Number(new URL(url).port);
const newSite = () => `cc-${randomUUID().slice(0, 8)}.example.com`;
const quiet: RecorderLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

let h: TestHarness;
let api: TestApi;
let reader: string;
const clients: ControlsClient[] = [];
const relays: Relay[] = [];
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
  reader = await api.token(['read']);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(relays.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await api.close();
  await h.close();
});

function client(options: Partial<Parameters<typeof createControlsClient>[0]> = {}): ControlsClient {
  const c = createControlsClient({ apiUrl: api.url, token: reader, logger: quiet, ...options });
  clients.push(c);
  return c;
}

async function relayTo(target: TestApi): Promise<Relay> {
  const r = await startRelay(portOf(target.url));
  relays.push(r);
  return r;
}

const versionOf = (c: ControlsClient, site: string) => c.controlsFor(site)?.version;
const holds = (c: ControlsClient, site: string, version: number) =>
  eventually(
    () => Promise.resolve(versionOf(c, site) === version ? true : undefined),
    `${site} at version ${version}`,
    15_000,
  );

test(
  'the snapshot, then each change by version, for any spelling of the site; ' + 'onChange hears each newer record once',
  async () => {
    const a = newSite();
    const b = newSite();
    const v1 = await change(h.pool, a, { concurrencyLimit: 12, reason: 'first tick' });
    const c = client({ sites: [a, b.toUpperCase()] });
    const heard: SiteControls[] = [];
    c.onChange((r) => heard.push(r));
    await c.ready();
    expect(c.controlsFor(a)).toMatchObject({
      site: a,
      concurrencyLimit: 12,
      version: v1,
      reason: 'first tick',
      paused: false,
    });
    // The product's spelling rules: a URL, upper case, a trailing dot all name the site.
    expect(c.controlsFor(`HTTPS://${a.toUpperCase()}./products?id=1`)).toBe(c.controlsFor(a));
    // No record yet and unknownSite 'allow' (the default): the crawler's own defaults apply.
    expect(c.controlsFor(b)).toBeUndefined();
    expect(c.status()).toMatchObject({ connected: true, sites: 1, snapshots: 1, reconnects: 0 });

    const v2 = await change(h.pool, a, { paused: true, reason: 'paused by the loop' });
    const v3 = await change(h.pool, b, { concurrencyLimit: 3 });
    await holds(c, a, v2);
    await holds(c, b, v3);
    expect(c.controlsFor(a)).toMatchObject({ paused: true, reason: 'paused by the loop' });
    expect(heard.map((r) => [r.site, r.version])).toEqual([
      [a, v1],
      [a, v2],
      [b, v3],
    ]);
    expect(c.status()).toMatchObject({ connected: true, sites: 2 });
    expect(c.status().lastEventAt).toBeInstanceOf(Date);
  },
);

test(
  'a cut connection is resumed with Last-Event-ID: the change made while it was down is replayed, not a new ' +
    'snapshot; meanwhile the last controls hold',
  async () => {
    const a = newSite();
    const v1 = await change(h.pool, a, { concurrencyLimit: 8 });
    const relay = await relayTo(api);
    const c = client({ apiUrl: relay.url, sites: [a] });
    await c.ready();
    await relay.stop();
    await eventually(
      () => Promise.resolve(c.status().connected ? undefined : true),
      'the client to see the stream drop',
    );
    // Fail-safe: the API is unreachable, the last known record is still what the crawler obeys.
    expect(c.controlsFor(a)).toMatchObject({ version: v1, concurrencyLimit: 8 });
    expect(c.status().lastError).toMatch(/stream broke|server ended|ECONNREFUSED|cannot reach/);
    const v2 = await change(h.pool, a, { concurrencyLimit: 4 });
    await relay.start();
    await holds(c, a, v2);
    expect(c.status()).toMatchObject({ connected: true, reconnects: 1, snapshots: 1, lastError: undefined });
  },
);

test(
  'a restarted API (new process, same address) sends a fresh snapshot, which replaces the map: a site whose ' +
    'record is gone is forgotten',
  async () => {
    const a = newSite();
    const b = newSite();
    await change(h.pool, a, { concurrencyLimit: 8 });
    const vb = await change(h.pool, b, { concurrencyLimit: 5 });
    const first = await startTestApi(h);
    const relay = await relayTo(first);
    const c = client({ apiUrl: relay.url, token: await first.token(['read']), sites: [a, b] });
    await c.ready();
    expect(versionOf(c, b)).toBe(vb);

    await relay.stop();
    await first.close();
    await eventually(() => Promise.resolve(c.status().connected ? undefined : true), 'the client to see the API go');
    const va = await change(h.pool, a, { paused: true });
    await h.pool.query('DELETE FROM site_controls WHERE site = $1', [b]);
    const second = await startTestApi(h);
    try {
      relay.target = portOf(second.url);
      await relay.start();
      await eventually(
        () => Promise.resolve(c.status().snapshots === 2 ? true : undefined),
        'a second snapshot',
        15_000,
      );
      expect(c.controlsFor(a)).toMatchObject({ version: va, paused: true });
      expect(c.controlsFor(b)).toBeUndefined();
      expect(c.status()).toMatchObject({ connected: true, reconnects: 1, sites: 1 });
    } finally {
      await c.close();
      await second.close();
    }
  },
);

test('a stream that goes silent (no heartbeat) is taken for dead and reconnected', async () => {
  const a = newSite();
  await change(h.pool, a, { concurrencyLimit: 8 });
  const relay = await relayTo(api);
  const c = client({ apiUrl: relay.url, sites: [a], silenceTimeoutMs: 1_500 });
  await c.ready();
  // The frozen connection never ends on its own: only the silence rule gets the client off it.
  relay.freeze();
  const v2 = await change(h.pool, a, { concurrencyLimit: 2 });
  await holds(c, a, v2);
  expect(c.status().reconnects).toBeGreaterThanOrEqual(1);
});

test("unknownSite 'pause': a site with no record is paused (version 0) until its record arrives", async () => {
  const a = newSite();
  const c = client({ sites: [a], unknownSite: 'pause' });
  await c.ready();
  expect(c.controlsFor(a)).toMatchObject({ site: a, paused: true, canaryOnly: false, version: 0 });
  expect(c.controlsFor(`https://${a.toUpperCase()}/x`)).toMatchObject({ site: a, paused: true, version: 0 });
  const v1 = await change(h.pool, a, { concurrencyLimit: 9 });
  await holds(c, a, v1);
  expect(c.controlsFor(a)).toMatchObject({ paused: false, concurrencyLimit: 9 });
});

test(
  'ready() rejects at once with one line naming the problem: unknown token, token without read, wrong URL; and ' +
    'after its timeout when the API is down',
  async () => {
    const started = Date.now();
    await expect(client({ token: 'th_not-a-real-token' }).ready()).rejects.toThrow(
      /^controls: the API refused the token \(401: .*\); pass a valid token with the read scope/,
    );
    await expect(client({ token: await api.token(['ingest']) }).ready()).rejects.toThrow(
      /^controls: the token lacks the read scope \(403: /,
    );
    await expect(client({ apiUrl: `${api.url}/nope` }).ready()).rejects.toThrow(
      /^controls: http:\/\/127\.0\.0\.1:\d+\/nope\/v1\/controls\/stream is not found \(404\); apiUrl must be/,
    );
    // "At once": well within the 10 s ready timeout.
    expect(Date.now() - started).toBeLessThan(8_000);
    const down = await startRelay(1);
    await down.stop();
    relays.push(down);
    const c = client({ apiUrl: down.url, readyTimeoutMs: 1_000 });
    await expect(c.ready()).rejects.toThrow(
      joinRegExp(
        /^controls: no snapshot from the controls stream at http:\/\/127\.0\.0\.1:\d+ /,
        /within 1000 ms \(last problem: cannot reach .*ECONNREFUSED.*\)/,
      ),
    );
    expect(c.status()).toMatchObject({ connected: false, sites: 0 });
  },
);

test('bad options fail at once with one line naming the option', () => {
  expect(() => createControlsClient({ apiUrl: 'localhost:8787', token: reader })).toThrow(
    'createControlsClient: apiUrl: must start with http:// or https:// (got "localhost:8787")',
  );
  expect(() => createControlsClient({ apiUrl: api.url, token: ' ' })).toThrow(/^createControlsClient: token is empty/);
  expect(() =>
    createControlsClient({ apiUrl: api.url, token: reader, sites: ['ok.example.com', 'not a host'] }),
  ).toThrow(/^createControlsClient: sites\[1\]: must be a host name/);
  // @ts-expect-error -- unknownSite takes 'allow' or 'pause'
  expect(() => createControlsClient({ apiUrl: api.url, token: reader, unknownSite: 'deny' })).toThrow(
    `createControlsClient: unknownSite: must be 'allow' or 'pause' (got "deny")`,
  );
});
