/**
 * TARGET_HEALTH_MARKERS where the server classifies: `POST /v1/events` (JSON arrays, on the server's event
 * loop). Events posted after the file changes are classified by the new marker with no restart; a bad
 * file is refused and the previous markers stay.
 *
 * Not covered here: the ingest threads (NDJSON bodies). They build the same ingester, which reads the
 * variable from their own environment — but Jest gives a test file its own copy of `process.env`, so
 * threads started from a test never see a variable the test sets.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deploymentCatalogue } from '../../server/config/marker-catalogue';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { env, openHarness, type TestHarness } from '../kit/services';

const SHOP_WALL = {
  id: 'shop-wall',
  vendor: 'Example Shop',
  kind: 'block',
  bodyAny: ['our shop has paused your visits'],
};
const PAGE =
  '<html><head><title>Example Shop</title></head><body><p>Our shop has paused your visits for a ' +
  'while.</p></body></html>';

let h: TestHarness;
let inline: TestApi;
let token: string;
let file: string;
const previous = process.env.TARGET_HEALTH_MARKERS;

beforeAll(async () => {
  file = join(mkdtempSync(join(env('TH_TEST_DIR'), 'markers-api-')), 'markers.json');
  writeFileSync(file, JSON.stringify({ version: 1, markers: [] }));
  // Read by the server's ingester when it is built (server/config/marker-catalogue.ts, deploymentCatalogue).
  process.env.TARGET_HEALTH_MARKERS = file;
  h = await openHarness();
  inline = await startTestApi(h);
  token = await inline.token(['ingest']);
});
afterAll(async () => {
  await inline.close();
  deploymentCatalogue().close();
  if (previous === undefined) delete process.env.TARGET_HEALTH_MARKERS;
  else process.env.TARGET_HEALTH_MARKERS = previous;
  await h.close();
});

async function postAndRead(
  api: TestApi,
  site: string,
  eventId: string,
): Promise<{ outcome: string; marker_id: string | null }> {
  const event = { eventId, ts: Date.now(), site, status: 200, latencyMs: 90, bytes: PAGE.length, bodySample: PAGE };
  const r = await fetch(
    `${api.url}/v1/events`,
    authed(token, { method: 'POST', body: JSON.stringify([event]), headers: { 'content-type': 'application/json' } }),
  );
  expect(r.status).toBe(200);
  const { rows } = await h.pool.query<{ outcome: string; marker_id: string | null }>(
    'SELECT outcome, marker_id FROM request_events WHERE site = $1 AND event_id = $2',
    [site, eventId],
  );
  return rows[0]!;
}

async function until<T>(
  what: string,
  get: () => Promise<T> | T,
  ok: (v: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('the server classifies with the file as it changes; a bad file keeps the previous markers', async () => {
  const site = `markers-api-${randomUUID().slice(0, 8)}.example.com`;
  expect(await postAndRead(inline, site, 'before')).toEqual({ outcome: 'ok', marker_id: null });

  const first = deploymentCatalogue().current();
  writeFileSync(file, JSON.stringify({ version: 1, markers: [SHOP_WALL] }));
  await until(
    'the server to re-read the file',
    () => deploymentCatalogue().current(),
    (c) => c !== first,
  );
  expect(await postAndRead(inline, site, 'after')).toEqual({ outcome: 'soft_block', marker_id: 'shop-wall' });

  const good = deploymentCatalogue().current();
  writeFileSync(
    file,
    '{"version": 1, "markers": [{"id": "shop-wall", "vendor": "Example Shop", "kind": "block", "bodyRegex": ' +
      '"(x+)+y"}]}',
  );
  // Refused: after more than a poll and a debounce the catalogue is the same object (and a later good
  // file is still taken, below: the watcher goes on).
  await new Promise((r) => setTimeout(r, 2_000));
  expect(deploymentCatalogue().current()).toBe(good);
  expect(await postAndRead(inline, site, 'bad-file')).toEqual({ outcome: 'soft_block', marker_id: 'shop-wall' });

  writeFileSync(file, JSON.stringify({ version: 1, markers: [], disable: ['recaptcha-widget'] }));
  await until(
    'the next good file',
    () => deploymentCatalogue().current(),
    (c) => c !== good,
  );
  expect(await postAndRead(inline, site, 'removed')).toEqual({ outcome: 'ok', marker_id: null });
});
