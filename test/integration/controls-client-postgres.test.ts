/**
 * The in-process controls client (createPostgresControlsClient) on the real PostgreSQL: the snapshot of
 * the sites it follows, a change written by the product's writer reaching it through LISTEN th_controls,
 * and the map kept while its connection is killed and re-read (snapshot) once it is back.
 */
import { randomUUID } from 'node:crypto';
import { createPostgresControlsClient } from '@target-health/crawler/postgres';
import type { ControlsClient } from '@target-health/crawler/controls';
import type { RecorderLogger } from '@target-health/crawler/recorder';
import { env, eventually, openHarness, type TestHarness } from '../kit/services';
import { changeControls as change } from '../kit/controls';

const newSite = () => `ccpg-${randomUUID().slice(0, 8)}.example.com`;
const quiet: RecorderLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const holds = (c: ControlsClient, site: string, version: number) =>
  eventually(
    () => Promise.resolve(c.controlsFor(site)?.version === version ? true : undefined),
    `${site} at version ${version}`,
    15_000,
  );

let h: TestHarness;
const clients: ControlsClient[] = [];
beforeAll(async () => {
  h = await openHarness();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await h.close();
});

test(
  'connectionString: the snapshot of its sites, then a change written by writeControls arrives through LISTEN; ' +
    'other sites are not followed',
  async () => {
    const a = newSite();
    const other = newSite();
    const v1 = await change(h.pool, a, { concurrencyLimit: 7 });
    const c = createPostgresControlsClient({
      connectionString: env('DATABASE_URL'),
      sites: [a.toUpperCase()],
      logger: quiet,
    });
    clients.push(c);
    const heard: number[] = [];
    c.onChange((r) => heard.push(r.version));
    await c.ready();
    expect(c.controlsFor(`https://${a}/p`)).toMatchObject({ site: a, concurrencyLimit: 7, version: v1 });
    const v2 = await change(h.pool, a, { paused: true, canaryOnly: true });
    await change(h.pool, other, { concurrencyLimit: 3 });
    await holds(c, a, v2);
    expect(c.controlsFor(a)).toMatchObject({ paused: true, canaryOnly: true });
    expect(c.controlsFor(other)).toBeUndefined();
    expect(heard).toEqual([v1, v2]);
    expect(c.status()).toMatchObject({ connected: true, sites: 1, snapshots: 1, reconnects: 0 });
  },
);

test(
  'pool: its LISTEN connection killed → it reconnects keeping its controls, and a change made as it lost the ' +
    'connection is read',
  async () => {
    const a = newSite();
    const v1 = await change(h.pool, a, { concurrencyLimit: 7 });
    const c = createPostgresControlsClient({ pool: h.pool, sites: [a], logger: quiet, reconnectMaxMs: 500 });
    clients.push(c);
    await c.ready();
    expect(c.controlsFor(a)?.version).toBe(v1);
    await h.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ' +
        "'target-health-controls-client' AND pid <> pg_backend_pid()",
    );
    // Written while the client is away or reconnecting: its notification may be lost, the snapshot after the reconnect
    // reads it.
    const v2 = await change(h.pool, a, { concurrencyLimit: 2 });
    await eventually(
      () => Promise.resolve(c.status().reconnects === 1 ? true : undefined),
      'the client to reconnect',
      10_000,
    );
    await holds(c, a, v2);
    expect(c.status()).toMatchObject({ connected: true, reconnects: 1, sites: 1 });
  },
);
