/**
 * Controls out on the real server (random port), real PostgreSQL and its NOTIFY trigger: ETag and 304
 * from memory, a change → 200 with the new ETag, the long-poll (woken by a change, answered 304 at its
 * deadline), the SSE stream (snapshot, changes, filter, resume with Last-Event-ID, heartbeats), auth,
 * and the feed reconnecting after its PostgreSQL connection is killed while a change is made.
 * Changes are written by the product's own writer (server/db/controls.ts `writeControls`, as the action activity does).
 */
import { randomUUID } from 'node:crypto';
import { controlsOf, readControls, writeControls } from '../../server/db/controls';
import { createPool, type Pool } from '../../server/db/pool';
import { FEED_APPLICATION_NAME } from '../../server/api/controls-feed';
import { workflowIdForSite } from '../../core/common/names';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env, eventually, openHarness, type TestHarness } from '../kit/services';
import { openSse, type SseClient } from '../kit/sse-client';
import { changeControls as change } from '../kit/controls';

const newSite = () => `ctl-${randomUUID().slice(0, 8)}.example.com`;

/** The API's token cache (server/api/auth.ts): a verified token is not verified again for 5 s. */
const TOKEN_CACHE_MS = 5_000;

interface QueryCount {
  /** Queries other than token verification. */
  count(): number;
  /** When the token verifications were sent (ms). */
  verifications(): number[];
}

/**
 * Counts the queries the API sends through its pool (instrumentation of the real pool, not a mock).
 * Token verifications are kept apart with their times: the cache holds a token for 5 s of wall time, so
 * on a loaded machine polls that take longer than that verify it again — once per 5 s, as designed.
 */
function countQueries(pool: Pool): QueryCount {
  let n = 0;
  const verified: number[] = [];
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (/FROM api_tokens WHERE token_hash/.test(text)) verified.push(Date.now());
    else n += 1;
    return original(...args);
  };
  return { count: () => n, verifications: () => [...verified] };
}

/** Token verifications between `from` and now: none while the last one before is fresh, then one per 5 s at most. */
function expectTokenCacheHeld(q: QueryCount, from: number): void {
  const all = q.verifications();
  const lastBefore = Math.max(0, ...all.filter((t) => t < from));
  const during = all.filter((t) => t >= from);
  const allowed = Math.max(0, Math.ceil((Date.now() - (lastBefore + TOKEN_CACHE_MS)) / TOKEN_CACHE_MS));
  expect(during.length).toBeLessThanOrEqual(allowed);
}

let h: TestHarness;
let api: TestApi;
let apiPool: Pool;
let queries: QueryCount;
let reader: string;
beforeAll(async () => {
  h = await openHarness();
  apiPool = createPool(env('DATABASE_URL'), 4);
  queries = countQueries(apiPool);
  api = await startTestApi({ ...h, pool: apiPool });
  reader = await api.token(['read']);
});
afterAll(async () => {
  await api.close();
  await apiPool.end();
  await h.close();
});

const controlsUrl = (site: string, query = '') => `${api.url}/v1/sites/${encodeURIComponent(site)}/controls${query}`;
const get = (site: string, query = '', headers: Record<string, string> = {}) =>
  fetch(controlsUrl(site, query), authed(reader, { headers }));
const errorOf = async (r: Response) => ((await r.json()) as { error: { code: string; message: string } }).error;

test(
  'GET controls: the record with its version as ETag; If-None-Match → 304 from memory; a change → 200 with the ' +
    'new ETag',
  async () => {
    const site = newSite();
    const v1 = await change(h.pool, site, { concurrencyLimit: 12, reason: 'first tick' });
    // The site is spelled as a user may: case and a trailing dot are normalised.
    const first = await get(site.toUpperCase() + '.');
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBe(`"${v1}"`);
    const body = (await first.json()) as Record<string, unknown>;
    expect(body).toEqual({
      site,
      concurrencyLimit: 12,
      revisitMultiplier: 1,
      paused: false,
      canaryOnly: false,
      effectiveCostMultiplier: 1,
      band: 'healthy',
      reason: 'first tick',
      version: v1,
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    });

    // The site is cached and the token verified: twenty polls cost no database round trip (the token is
    // verified again only if the polls outlast its 5 s in the cache).
    const before = queries.count();
    const pollsFrom = Date.now();
    for (let i = 0; i < 20; i++) {
      const r = await get(site, '', { 'if-none-match': i % 2 === 0 ? `"${v1}"` : `W/"${v1}", "0"` });
      expect(r.status).toBe(304);
      expect(r.headers.get('etag')).toBe(`"${v1}"`);
    }
    expect(queries.count() - before).toBe(0);
    expectTokenCacheHeld(queries, pollsFrom);
    // A different tag → the record.
    expect((await get(site, '', { 'if-none-match': '"999999"' })).status).toBe(200);

    const v2 = await change(h.pool, site, { paused: true, canaryOnly: true, band: 'resisting', reason: 'blocked' });
    expect(v2).toBe(v1 + 1);
    // The feed learns of it from the NOTIFY; wait for the condition (no sleep).
    const fresh = await eventually(async () => {
      const r = await get(site, '', { 'if-none-match': `"${v1}"` });
      return r.status === 200 ? r : undefined;
    }, 'the change to reach the API');
    expect(fresh.headers.get('etag')).toBe(`"${v2}"`);
    expect(await fresh.json()).toMatchObject({
      paused: true,
      canaryOnly: true,
      band: 'resisting',
      reason: 'blocked',
      version: v2,
    });
    expect((await get(site, '', { 'if-none-match': `"${v2}"` })).status).toBe(304);
  },
);

test('a site without controls is a 404 naming how to get them; bad input is a 400 naming the parameter', async () => {
  const missing = newSite();
  const r = await get(missing);
  expect(r.status).toBe(404);
  expect(await errorOf(r)).toEqual({
    code: 'not_found',
    message:
      `site: no controls recorded for ${missing} yet; its loop writes them on its first tick (start it with ` +
      `\`target-health start ${missing}\`)`,
  });
  // Remembered as absent: a crawler polling before its loop starts costs no query either.
  const before = queries.count();
  const pollFrom = Date.now();
  expect((await get(missing)).status).toBe(404);
  expect(queries.count() - before).toBe(0);
  expectTokenCacheHeld(queries, pollFrom);
  // ...and its first controls are seen as soon as they are written.
  const v = await change(h.pool, missing, {});
  await eventually(
    async () => ((await get(missing)).status === 200 ? true : undefined),
    'controls of a site remembered as absent',
  );
  expect((await get(missing, `?after=${v}`)).status).toBe(304);

  const site = newSite();
  await change(h.pool, site, {});
  const cases: Array<[string, string, RegExp]> = [
    ['not a host', '', /^site: must be a host name like shop\.example\.com/],
    [site, '?wait=2m', /^wait: must be a duration of at most 60s/],
    [site, '?wait=61s&after=1', /^wait: must be a duration of at most 60s/],
    [site, '?after=-1', /^after: must be a version number/],
    [site, '?wait=5s', /^after: required with wait/],
    [site, '?wiat=5s', /^unknown field "wiat"/],
  ];
  for (const [s, query, message] of cases) {
    const bad = await get(s, query);
    expect(bad.status).toBe(400);
    const err = await errorOf(bad);
    expect(err.code).toBe('bad_request');
    expect(err.message).toMatch(message);
  }
});

test(
  'long-poll: answers 200 when the version moves past `after`, ' + '304 at the deadline, at once for another version',
  async () => {
    const site = newSite();
    const v1 = await change(h.pool, site, {});
    await change(h.pool, site, { concurrencyLimit: 8 });
    const v2 = v1 + 1;
    // An older version than the current one: answered at once with the record.
    const behind = await get(site, `?after=${v1}&wait=30s`);
    expect(behind.status).toBe(200);
    expect(behind.headers.get('etag')).toBe(`"${v2}"`);

    // Waiting on the current version: a pause wakes it (long before the 30 s deadline).
    const started = performance.now();
    const waiting = get(site, `?after=${v2}&wait=30s`);
    const v3 = await change(h.pool, site, {
      paused: true,
      canaryOnly: true,
      band: 'resisting',
      reason: 'paused by the loop',
    });
    const woke = await waiting;
    expect(woke.status).toBe(200);
    expect(woke.headers.get('etag')).toBe(`"${v3}"`);
    expect(await woke.json()).toMatchObject({ paused: true, version: v3 });
    expect(performance.now() - started).toBeLessThan(20_000);

    // Through If-None-Match instead of `after`.
    const viaEtag = get(site, '?wait=30s', { 'if-none-match': `"${v3}"` });
    const v4 = await change(h.pool, site, { paused: false, canaryOnly: false, band: 'degrading', reason: 'resumed' });
    const r = await viaEtag;
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe(`"${v4}"`);

    // Nothing changes: 304 with the current ETag at the deadline.
    const t = performance.now();
    const timedOut = await get(site, `?after=${v4}&wait=1s`);
    expect(timedOut.status).toBe(304);
    expect(timedOut.headers.get('etag')).toBe(`"${v4}"`);
    expect(performance.now() - t).toBeGreaterThanOrEqual(950);
  },
);

test(
  'SSE: a snapshot, then each change of the filtered sites; resumes with Last-Event-ID; a snapshot for an id too ' +
    'old; heartbeats',
  async () => {
    const [a, b] = [newSite(), newSite()];
    const a1 = await change(h.pool, a, { reason: 'a nominal' });
    await change(h.pool, b, {});
    const url = `${api.url}/v1/controls/stream?site=${a}&site=${encodeURIComponent(a.toUpperCase())}`;
    const stream = await openSse(url, { authorization: `Bearer ${reader}` });
    let resumed: SseClient | undefined;
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const snap = await stream.waitFor((e) => e.event === 'snapshot', { what: 'the snapshot' });
      expect(JSON.parse(snap.data)).toEqual({
        sites: [expect.objectContaining({ site: a, version: a1, reason: 'a nominal' })],
      });

      // b is not in the filter: its change is not sent; a's pause is.
      await change(h.pool, b, { concurrencyLimit: 3 });
      const a2 = await change(h.pool, a, { paused: true, canaryOnly: true, band: 'resisting', reason: 'paused' });
      const paused = await stream.waitFor((e) => e.event === 'controls', { what: "a's pause" });
      expect(JSON.parse(paused.data)).toMatchObject({ site: a, paused: true, version: a2 });
      expect(Number(paused.id)).toBeGreaterThan(Number(snap.id));
      expect(
        stream.events.filter((e) => e.event === 'controls').map((e) => (JSON.parse(e.data) as { site: string }).site),
      ).toEqual([a]);
      stream.close();

      // Changes while disconnected are replayed after the last id seen, in order, without a snapshot.
      // The feed reads a site's row when notified, so two changes committed before that read arrive as one
      // event (the latest record): wait for each to be held (a GET answers its version) before the next.
      const held = (v: number) =>
        eventually(
          async () => ((await get(a)).headers.get('etag') === `"${v}"` ? true : undefined),
          `the feed to hold version ${v}`,
        );
      const a3 = await change(h.pool, a, { paused: false, canaryOnly: false, band: 'degrading', reason: 'resumed' });
      await held(a3);
      const a4 = await change(h.pool, a, { concurrencyLimit: 4 });
      await held(a4);
      resumed = await openSse(url, { authorization: `Bearer ${reader}`, 'last-event-id': paused.id! });
      await resumed.waitFor(
        (e) => e.event === 'controls' && (JSON.parse(e.data) as { version: number }).version === a4,
        {
          what: 'the replayed changes',
        },
      );
      expect(resumed.events.map((e) => [e.event, (JSON.parse(e.data) as { version: number }).version])).toEqual([
        ['controls', a3],
        ['controls', a4],
      ]);
      expect(Number(resumed.events[0]!.id)).toBeGreaterThan(Number(paused.id));

      // An id this server does not hold (older than its ring, or from another process): a snapshot first.
      const old = await openSse(url, { authorization: `Bearer ${reader}`, 'last-event-id': '1' });
      const oldSnap = await old.waitFor(() => true, { what: 'the first event' });
      old.close();
      expect(oldSnap.event).toBe('snapshot');
      expect(JSON.parse(oldSnap.data)).toEqual({ sites: [expect.objectContaining({ site: a, version: a4 })] });

      // A comment line every 15 s keeps the connection alive.
      await resumed.waitForComments(1, 20_000);
    } finally {
      stream.close();
      resumed?.close();
    }
  },
);

test('SSE without a filter sees every site; the stream and the controls routes need the read scope', async () => {
  const all = await openSse(`${api.url}/v1/controls/stream`, { authorization: `Bearer ${reader}` });
  try {
    await all.waitFor((e) => e.event === 'snapshot');
    const site = newSite();
    const v = await change(h.pool, site, {});
    const e = await all.waitFor(
      (x) => x.event === 'controls' && (JSON.parse(x.data) as { site: string }).site === site,
      { what: 'the new site' },
    );
    expect(JSON.parse(e.data)).toMatchObject({ site, version: v });
  } finally {
    all.close();
  }

  const site = newSite();
  await change(h.pool, site, {});
  const ingester = await api.token(['ingest']);
  for (const url of [controlsUrl(site), `${api.url}/v1/controls/stream`]) {
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="target-health"');
    expect((await fetch(url, authed('th_not-a-real-token'))).status).toBe(401);
    const forbidden = await fetch(url, authed(ingester));
    expect(forbidden.status).toBe(403);
    expect((await errorOf(forbidden)).message).toMatch(/lacks the scope "read"/);
  }
  const bad = await fetch(`${api.url}/v1/controls/stream?site=not%20a%20host`, authed(reader));
  expect(bad.status).toBe(400);
  expect((await errorOf(bad)).message).toMatch(/^site: must be a host name/);
});

describe('the feed after its PostgreSQL connection is lost', () => {
  // A private database: its listener can be killed and connections refused without touching other test files.
  let db: PrivateDatabase;
  let privateApi: TestApi;
  let closed = false;
  beforeAll(async () => {
    db = await privateDatabase(env('DATABASE_URL'));
    privateApi = await startTestApi({ ...h, pool: db.pool });
  });
  afterAll(async () => {
    if (!closed) await privateApi.close();
    await h.pool.query(`ALTER DATABASE ${new URL(db.url).pathname.slice(1)} ALLOW_CONNECTIONS true`);
    await db.drop();
  });

  test(
    'a change made while it was away reaches waiting ' + 'long-polls and streams once it is back; closing ends them',
    async () => {
      const name = new URL(db.url).pathname.slice(1);
      const token = await privateApi.token(['read']);
      const site = newSite();
      const v1 = await change(db.pool, site, {});
      const first = await fetch(`${privateApi.url}/v1/sites/${site}/controls`, authed(token));
      expect(first.headers.get('etag')).toBe(`"${v1}"`);
      const stream = await openSse(`${privateApi.url}/v1/controls/stream?site=${site}`, {
        authorization: `Bearer ${token}`,
      });
      try {
        await stream.waitFor((e) => e.event === 'snapshot');
        const longPoll = fetch(`${privateApi.url}/v1/sites/${site}/controls?after=${v1}&wait=60s`, authed(token));
        // The writer's connection is taken now: no new connection may be opened while the database refuses them.
        const writer = await db.pool.connect();
        let v2: number;
        try {
          await h.pool.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
          const { rows } = await h.pool.query<{ killed: boolean }>(
            `SELECT pg_terminate_backend(pid, 10000) AS killed FROM pg_stat_activity WHERE datname = $1 AND ` +
              `application_name = $2`,
            [name, FEED_APPLICATION_NAME],
          );
          expect(rows).toEqual([{ killed: true }]);
          // The change is made with no listener on the database: its notification is lost.
          await writer.query('BEGIN');
          const old = await readControls(writer, site, { forUpdate: true });
          ({ version: v2 } = await writeControls(
            writer,
            {
              site,
              workflowId: workflowIdForSite(site),
              actionKey: `test/${randomUUID()}`,
              next: {
                ...controlsOf(old!),
                paused: true,
                canaryOnly: true,
                band: 'resisting',
                reason: 'paused while away',
              },
              changedFields: ['paused'],
              routeDiagnosis: null,
              assessmentKey: null,
              decisionKey: null,
              actor: 'test',
            },
            old,
          ));
          await writer.query('COMMIT');
        } finally {
          writer.release();
          await h.pool.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        }
        // Back: the feed re-reads the cached site (waking the long-poll) and streams get a fresh snapshot.
        const woke = await longPoll;
        expect(woke.status).toBe(200);
        expect(await woke.json()).toMatchObject({ site, paused: true, version: v2 });
        const snapshots = () => stream.events.filter((e) => e.event === 'snapshot');
        const resnap = await stream.waitFor(
          (e) =>
            e.event === 'snapshot' &&
            (JSON.parse(e.data) as { sites: Array<{ version: number }> }).sites[0]?.version === v2,
          { timeoutMs: 30_000, what: 'a fresh snapshot after the reconnect' },
        );
        expect(snapshots().length).toBeGreaterThanOrEqual(2);
        expect(JSON.parse(resnap.data)).toEqual({
          sites: [expect.objectContaining({ site, paused: true, reason: 'paused while away' })],
        });
        // The listener is back on the database.
        const { rows: listeners } = await h.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`,
          [name, FEED_APPLICATION_NAME],
        );
        expect(listeners).toHaveLength(1);

        // Closing the server answers a waiting long-poll (304) and ends open streams instead of hanging.
        const pending = fetch(`${privateApi.url}/v1/sites/${site}/controls?after=${v2}&wait=60s`, authed(token));
        await eventually(
          () => Promise.resolve(privateApi.app.controlsFeed.status().waiting === 1 ? true : undefined),
          'the long-poll to be waiting',
        );
        closed = true;
        const closing = privateApi.close();
        const answered = await pending;
        await closing;
        await stream.ended;
        expect(answered.status).toBe(304);
      } finally {
        stream.close();
      }
    },
  );
});
