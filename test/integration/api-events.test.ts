/**
 * `POST /v1/events` on the real server (random port) and PostgreSQL: a good batch is stored and
 * classified, a mixed one stores exactly its valid lines, a fully invalid one writes nothing, a resent
 * (or concurrently retried) batch stores each event once; gzip, the body limit (a gzip bomb included),
 * the media types, and the auth failures.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
/** The server as `target-health api` runs it: NDJSON bodies parsed and stored by ingest threads. */
let api: TestApi;
/** The same server without threads: everything on the event loop (JSON arrays always are). */
let inline: TestApi;
let ingestToken: string;
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h, {}, undefined, { ingestThreads: true });
  inline = await startTestApi(h);
  ingestToken = await api.token(['ingest']);
});
afterAll(async () => {
  await api.close();
  await inline.close();
  await h.close();
});

const newSite = () => `api-ev-${randomUUID().slice(0, 8)}.example.com`;
const page = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'pages', name), 'utf8');

function event(site: string, i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventId: `e${i}`,
    ts: Date.now() - 60_000 + i,
    site,
    route: { country: 'DE', pool: 'res' },
    pageType: 'product',
    status: 200,
    latencyMs: 100 + i,
    bytes: 50_000,
    ...extra,
  };
}
const ndjson = (events: readonly unknown[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

interface Answer {
  status: number;
  body: {
    accepted?: number;
    inserted?: number;
    duplicates?: number;
    rejected?: Array<{ index: number; errors: string[] }>;
    error?: { code: string; message: string };
  };
}

async function post(
  body: string | Uint8Array,
  headers: Record<string, string>,
  token: string | null = ingestToken,
  url = api.url,
): Promise<Answer> {
  const init: RequestInit = { method: 'POST', body, headers };
  const r = await fetch(`${url}/v1/events`, token === null ? init : authed(token, init));
  return { status: r.status, body: (await r.json()) as Answer['body'] };
}
const NDJSON = { 'content-type': 'application/x-ndjson' };
const JSON_ARRAY = { 'content-type': 'application/json' };

async function storedIds(site: string): Promise<string[]> {
  const { rows } = await h.pool.query<{ event_id: string }>(
    'SELECT event_id FROM request_events WHERE site = $1 ORDER BY event_id',
    [site],
  );
  return rows.map((r) => r.event_id);
}
/** Requests counted in the site's minute rollups (all-routes rows): what a tick reads. */
async function rolledUp(site: string): Promise<number> {
  const { rows } = await h.pool.query<{ n: string | null }>(
    "SELECT sum(requests) AS n FROM rollup_minute WHERE site = $1 AND route_key = '*'",
    [site],
  );
  return Number(rows[0]!.n ?? 0);
}

test('a good NDJSON batch is stored whole and classified as `ingest` classifies it', async () => {
  const site = newSite();
  const events = Array.from({ length: 50 }, (_, i) => event(site, i));
  events.push(event(site, 50, { status: 403, bodySample: page('cloudflare-just-a-moment.html'), bytes: 7_000 }));
  const r = await post(ndjson(events), NDJSON);
  expect(r).toEqual({ status: 200, body: { accepted: 51, inserted: 51, duplicates: 0, rejected: [] } });
  // Answered after the commit: the rows are there the moment the answer is.
  expect(await storedIds(site)).toHaveLength(51);
  expect(await rolledUp(site)).toBe(51);
  const { rows } = await h.pool.query<{ outcome: string; rule: string }>(
    "SELECT outcome, rule FROM request_events WHERE site = $1 AND event_id = 'e50'",
    [site],
  );
  expect(rows).toEqual([{ outcome: 'challenge', rule: 'challenge_marker' }]);
});

test('a mixed JSON array stores exactly its valid events and names each refused index, field and fix', async () => {
  const site = newSite();
  const body = [
    event(site, 0),
    event(site, 1, { ts: 'yesterday' }),
    event(site, 2),
    { ...event(site, 3), statusCode: 200 },
    'not an event',
    event(site, 5, { ts: Date.now() - 40 * 86_400_000 }),
    event(site, 6),
  ];
  const r = await post(JSON.stringify(body), JSON_ARRAY);
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ accepted: 3, inserted: 3, duplicates: 0 });
  expect(r.body.rejected!.map((x) => x.index)).toEqual([1, 3, 4, 5]);
  const [ts, unknown, notObject, tooOld] = r.body.rejected!.map((x) => x.errors);
  expect(ts).toEqual([expect.stringMatching(/^ts: must be an ISO-8601 time with a zone/)]);
  expect(unknown).toEqual(['statusCode: unknown field; did you mean "status"?']);
  expect(notObject).toEqual([expect.stringMatching(/^event: must be a JSON object/)]);
  expect(tooOld).toEqual([expect.stringMatching(/^ts: .*30 days/)]);
  expect(await storedIds(site)).toEqual(['e0', 'e2', 'e6']);
  expect(await rolledUp(site)).toBe(3);
});

test.each([
  ['in ingest threads', () => api.url],
  ['on the event loop', () => inline.url],
])('NDJSON rejections are numbered by 0-based line, blank lines and bad JSON included (%s)', async (_how, url) => {
  const site = newSite();
  const lines = [
    JSON.stringify(event(site, 0)),
    '',
    '{"ts": ',
    JSON.stringify(event(site, 3)),
    JSON.stringify(event(site, 4, { latencyMs: -1 })),
  ];
  const r = await post(lines.join('\r\n'), NDJSON, ingestToken, url());
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ accepted: 2, inserted: 2, duplicates: 0 });
  expect(r.body.rejected).toEqual([
    { index: 2, errors: [expect.stringMatching(/^not valid JSON \(.*\); each line must be one JSON object$/)] },
    { index: 4, errors: [expect.stringMatching(/^latencyMs: /)] },
  ]);
  expect(await storedIds(site)).toEqual(['e0', 'e3']);
});

test('a fully invalid batch is a 400 listing every line, and writes nothing', async () => {
  const site = newSite();
  const body = [
    event(site, 0, { site: 'not a host' }),
    event(site, 1, { status: 1000 }),
    { ...event(site, 2), ts: undefined },
  ];
  for (const [payload, headers] of [
    [ndjson(body), NDJSON],
    [JSON.stringify(body), JSON_ARRAY],
  ] as const) {
    const r = await post(payload, headers);
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({
      code: 'invalid_events',
      message: expect.stringMatching(/^events: all 3 refused, nothing stored; first at index 0: site: /),
    });
    expect(r.body).toMatchObject({ accepted: 0, inserted: 0, duplicates: 0 });
    expect(r.body.rejected!.map((x) => [x.index, x.errors[0]!.split(':')[0]])).toEqual([
      [0, 'site'],
      [1, 'status'],
      [2, 'ts'],
    ]);
  }
  expect(await storedIds(site)).toEqual([]);
  expect(await rolledUp(site)).toBe(0);
  const { rows } = await h.pool.query<{ n: string }>('SELECT count(*) AS n FROM page_norms_day WHERE site = $1', [
    site,
  ]);
  expect(rows[0]!.n).toBe('0');
});

test('an empty body or one that is not a JSON array is a 400 naming the fix', async () => {
  expect(await post('\n\n', NDJSON)).toEqual({
    status: 400,
    body: { error: { code: 'empty_batch', message: expect.stringMatching(/^body: no events; /) } },
  });
  expect(await post('{"ts": 1}', JSON_ARRAY)).toEqual({
    status: 400,
    body: {
      error: {
        code: 'invalid_body',
        message: expect.stringMatching(/^body: must be a JSON array of events \(got an object\)/),
      },
    },
  });
  expect(await post('[{"ts": ', JSON_ARRAY)).toEqual({
    status: 400,
    body: { error: { code: 'invalid_body', message: expect.stringMatching(/^body: not valid JSON \(/) } },
  });
});

test(
  'a resent batch stores each event once, with or without eventIds; ' + 'so does a retry racing the first send',
  async () => {
    const site = newSite();
    const withIds = ndjson(Array.from({ length: 200 }, (_, i) => event(site, i)));
    expect((await post(withIds, NDJSON)).body).toMatchObject({ accepted: 200, inserted: 200, duplicates: 0 });
    expect((await post(withIds, NDJSON)).body).toMatchObject({ accepted: 200, inserted: 0, duplicates: 200 });
    // Without eventId: the id derived from the content deduplicates the resend.
    const t0 = Date.now() - 30_000;
    const withoutIds = JSON.stringify(
      Array.from({ length: 20 }, (_, i) => ({ ts: t0 + i, site, status: 200, latencyMs: 80 })),
    );
    expect((await post(withoutIds, JSON_ARRAY)).body).toMatchObject({ inserted: 20, duplicates: 0 });
    expect((await post(withoutIds, JSON_ARRAY)).body).toMatchObject({ inserted: 0, duplicates: 20 });
    // A client that timed out and retried while its first request was still being stored.
    const racing = ndjson(Array.from({ length: 300 }, (_, i) => event(site, 1_000 + i)));
    const [a, b] = await Promise.all([post(racing, NDJSON), post(racing, NDJSON)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.inserted! + b.body.inserted!).toBe(300);
    expect(a.body.duplicates! + b.body.duplicates!).toBe(300);
    expect(await storedIds(site)).toHaveLength(520);
    expect(await rolledUp(site)).toBe(520);
  },
);

test('gzip bodies are accepted; a broken one is a 400', async () => {
  const site = newSite();
  const events = Array.from({ length: 30 }, (_, i) => event(site, i));
  const r = await post(gzipSync(ndjson(events)), { ...NDJSON, 'content-encoding': 'gzip' });
  expect(r).toEqual({ status: 200, body: { accepted: 30, inserted: 30, duplicates: 0, rejected: [] } });
  const j = await post(gzipSync(JSON.stringify([event(site, 100)])), { ...JSON_ARRAY, 'content-encoding': 'gzip' });
  expect(j.body).toMatchObject({ inserted: 1 });
  expect(await storedIds(site)).toHaveLength(31);
  const broken = await post(gzipSync(ndjson(events)).subarray(0, 40), { ...NDJSON, 'content-encoding': 'gzip' });
  expect(broken).toEqual({
    status: 400,
    body: {
      error: {
        code: 'bad_gzip',
        message: expect.stringMatching(
          /^Content-Encoding: the body is not valid gzip \(.*\); compress it with gzip or drop the header$/,
        ),
      },
    },
  });
  const notGzip = await post(ndjson(events), { ...NDJSON, 'content-encoding': 'gzip' });
  expect(notGzip.status).toBe(400);
});

describe('the body limit', () => {
  const LIMIT = 64 * 1024;
  let small: TestApi;
  beforeAll(async () => {
    small = await startTestApi(h, { TH_API_BODY_LIMIT: LIMIT });
  });
  afterAll(() => small.close());

  test('a body over the limit is a 413 and stores nothing; one under it is stored', async () => {
    const site = newSite();
    const big = ndjson(Array.from({ length: 1_000 }, (_, i) => event(site, i)));
    expect(big.length).toBeGreaterThan(LIMIT);
    const r = await post(big, NDJSON, ingestToken, small.url);
    expect(r).toEqual({
      status: 413,
      body: {
        error: { code: 'too_large', message: `body: larger than the limit of ${LIMIT} bytes; send smaller batches` },
      },
    });
    expect(await storedIds(site)).toEqual([]);
    const ok = await post(
      ndjson(Array.from({ length: 100 }, (_, i) => event(site, i))),
      NDJSON,
      ingestToken,
      small.url,
    );
    expect(ok.body).toMatchObject({ inserted: 100 });
  });

  test('a gzip bomb (small compressed, over the limit decompressed) is a 413 and stores nothing', async () => {
    const site = newSite();
    // Valid events, so only the size can refuse it: ~16 MB of them compress to well under the limit.
    const line = `${JSON.stringify(event(site, 0))}\n`;
    const bomb = gzipSync(line.repeat(Math.ceil((16 << 20) / line.length)), { level: 9 });
    expect(bomb.length).toBeLessThan(LIMIT);
    const r = await post(bomb, { ...NDJSON, 'content-encoding': 'gzip' }, ingestToken, small.url);
    expect(r).toEqual({
      status: 413,
      body: {
        error: { code: 'too_large', message: `body: larger than the limit of ${LIMIT} bytes; send smaller batches` },
      },
    });
    expect(await storedIds(site)).toEqual([]);
  });
});

test('another media type or encoding is a 415 naming what is accepted', async () => {
  const site = newSite();
  const body = ndjson([event(site, 0)]);
  const text = await post(body, { 'content-type': 'text/plain' });
  expect(text).toEqual({
    status: 415,
    body: {
      error: {
        code: 'unsupported_media_type',
        message:
          'Content-Type text/plain is not accepted here; send application/x-ndjson or application/ndjson or ' +
          'application/json',
      },
    },
  });
  const none = await post(new Uint8Array(Buffer.from(body)), {});
  expect(none.status).toBe(415);
  expect(none.body.error!.message).toMatch(/^no Content-Type is not accepted here; send application\/x-ndjson/);
  const br = await post(body, { ...NDJSON, 'content-encoding': 'br' });
  expect(br).toEqual({
    status: 415,
    body: {
      error: {
        code: 'unsupported_media_type',
        message: 'Content-Encoding br is not accepted; send the body as is or with Content-Encoding: gzip',
      },
    },
  });
  expect(await storedIds(site)).toEqual([]);
});

test('no token or a bad one is a 401, a token without the ingest scope a 403; nothing is stored', async () => {
  const site = newSite();
  const body = ndjson([event(site, 0)]);
  const none = await post(body, NDJSON, null);
  expect(none.status).toBe(401);
  expect(none.body.error!.code).toBe('unauthorized');
  expect((await post(body, NDJSON, `th_${'B'.repeat(43)}`)).status).toBe(401);
  const reader = await post(body, NDJSON, await api.token(['read', 'decide']));
  expect(reader).toEqual({
    status: 403,
    body: { error: { code: 'forbidden', message: expect.stringMatching(/lacks the scope "ingest"/) } },
  });
  expect(await storedIds(site)).toEqual([]);
  // admin implies ingest.
  expect((await post(body, NDJSON, await api.token(['admin']))).body).toMatchObject({ inserted: 1 });
});
