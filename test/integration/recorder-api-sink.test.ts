/**
 * The recorder's API sink (apiSink) against the real API and PostgreSQL: a batch with an invalid event
 * stores the rest and hands the refused one to onRejected with the API's message; an undefined header
 * value does not refuse its event; recordWithId's id finds the stored row; the API closed for seconds
 * and started again (a new process on the same address) loses nothing and stores nothing twice; a
 * refused token is an error naming the token, retried within retryForMs and then counted failed.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import {
  apiSink,
  ApiSinkError,
  createRecorder,
  type RecorderLogger,
  type RejectedLine,
} from '../../server/compat/recorder';
import { startTestApi, type TestApi } from '../kit/api';
import { eventually, openHarness, testLogger, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
let ingest: string;
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
  ingest = await api.token(['ingest']);
});
afterAll(async () => {
  await api.close();
  await h.close();
});

const newSite = () => `sink-${randomUUID().slice(0, 8)}.example.com`;
const quiet: RecorderLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
function capture(): { logger: RecorderLogger; lines: Array<{ level: string; message: string }> } {
  const lines: Array<{ level: string; message: string }> = [];
  const at = (level: string) => (_fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, message });
  return { logger: { info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

async function storedIds(site: string): Promise<string[]> {
  const { rows } = await h.pool.query<{ event_id: string }>(
    'SELECT event_id FROM request_events WHERE site = $1 ORDER BY event_id',
    [site],
  );
  return rows.map((r) => r.event_id);
}

test(
  'a batch with one invalid event: the others are stored, the refused one reaches onRejected with the API ' +
    'message; an undefined header value is left out; recordWithId gives the stored id',
  async () => {
    const site = newSite();
    const rejected: Array<{ lines: RejectedLine[]; event: unknown }> = [];
    const recorder = createRecorder({
      sink: apiSink({ apiUrl: api.url, token: ingest, logger: quiet }),
      logger: quiet,
      onRejected: (lines, batch) => rejected.push(...lines.map((l) => ({ lines: [l], event: batch[l.line - 1] }))),
    });
    const now = Date.now() - 60_000;
    for (let i = 0; i < 4; i++) recorder.record({ eventId: `ok-${i}`, ts: now + i, site, status: 200, latencyMs: 100 });
    const bad = { eventId: 'bad-1', ts: now, site, status: 99, latencyMs: 100 };
    recorder.record(bad);
    // As Node's IncomingHttpHeaders hand them over: a header that is absent is `undefined`.
    const outcome = recorder.recordWithId({
      ts: now + 9,
      site,
      status: 403,
      latencyMs: 80,
      headers: { server: 'cloudflare', 'cf-mitigated': undefined, 'set-cookie': ['a=1', 'b=2'] },
    });
    expect(outcome).toMatchObject({ kept: true, slowDown: false });
    expect(outcome.id).toMatch(/^[A-Za-z0-9_-]{16}-[0-9a-z]{10}$/);
    await recorder.close();

    expect(await storedIds(site)).toEqual([outcome.id, 'ok-0', 'ok-1', 'ok-2', 'ok-3'].sort());
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.event).toBe(bad);
    expect(rejected[0]!.lines[0]!.errors).toEqual([expect.stringMatching(/^status: .*HTTP status code/)]);
    expect(recorder.stats()).toMatchObject({
      recorded: 6,
      stored: 5,
      rejected: 1,
      failed: 0,
      dropped: 0,
      duplicates: 0,
    });
  },
);

test(
  'every event of a batch invalid (400 invalid_events): all reach onRejected, nothing is retried; gzip off works ' +
    'the same',
  async () => {
    const site = newSite();
    const lines: number[] = [];
    const errors: unknown[] = [];
    const recorder = createRecorder({
      sink: apiSink({ apiUrl: api.url, token: ingest, gzip: false, logger: quiet }),
      logger: quiet,
      onRejected: (r) => lines.push(...r.map((x) => x.line)),
      onError: (err) => errors.push(err),
    });
    recorder.record({ ts: Date.now(), site, status: 1000, latencyMs: 1 });
    recorder.record({ ts: Date.now(), site, networkError: 'timeout', status: 200, latencyMs: 1 });
    await recorder.close();
    expect(lines).toEqual([1, 2]);
    expect(errors).toEqual([]);
    expect(await storedIds(site)).toEqual([]);
    expect(recorder.stats()).toMatchObject({ recorded: 2, rejected: 2, stored: 0, failed: 0 });
  },
);

/** The real API on a fixed address (startTestApi picks a random port; a restart must come back on the same one). */
async function apiOn(port: number): Promise<FastifyInstance> {
  const app = await buildApi({
    pool: h.pool,
    temporal: () => Promise.resolve(h.client),
    taskQueue: h.taskQueue,
    logger: testLogger,
    settings: apiEnvSchema.parse({ TH_API_PORT: String(port) }),
  });
  await app.listen({ host: '127.0.0.1', port });
  return app;
}

test(
  'the API closed for seconds, then a new one on the same address: the recorder retries and every event is ' +
    'stored once',
  async () => {
    const site = newSite();
    let app = await apiOn(0);
    const port = (app.server.address() as AddressInfo).port;
    const attempts: unknown[] = [];
    const { logger, lines } = capture();
    const recorder = createRecorder({
      sink: apiSink({ apiUrl: `http://127.0.0.1:${port}`, token: ingest, logger }),
      logger,
      batchSize: 10,
      retryInitialDelayMs: 100,
      retryMaxDelayMs: 1_000,
      onError: (err) => attempts.push(err),
    });
    const now = Date.now() - 60_000;
    for (let i = 0; i < 10; i++)
      recorder.record({ eventId: `before-${i}`, ts: now + i, site, status: 200, latencyMs: 50 });
    await recorder.flush();
    await app.close();
    // Recorded while the API is gone: two full batches that fail and are retried, and a partial one.
    for (let i = 0; i < 25; i++)
      recorder.record({ eventId: `during-${i}`, ts: now + 100 + i, site, status: 200, latencyMs: 50 });
    const down = Date.now();
    await eventually(
      () => Promise.resolve(attempts.length >= 3 && Date.now() - down >= 5_000 ? true : undefined),
      'failed attempts over 5 s of outage',
      20_000,
    );
    expect(attempts[0]).toBeInstanceOf(ApiSinkError);
    expect((attempts[0] as ApiSinkError).message).toMatch(
      /^cannot reach the API at http:\/\/127\.0\.0\.1:\d+\/v1\/events \(.*ECONNREFUSED/,
    );
    expect(recorder.stats().stored).toBe(10);
    app = await apiOn(port);
    try {
      await recorder.close();
    } finally {
      await app.close();
    }
    const ids = await storedIds(site);
    expect(ids).toHaveLength(35);
    expect(new Set(ids).size).toBe(35);
    expect(recorder.stats()).toMatchObject({
      recorded: 35,
      stored: 35,
      duplicates: 0,
      failed: 0,
      rejected: 0,
      buffered: 0,
    });
    expect(
      lines.some(
        (l) =>
          l.level === 'warn' &&
          l.message.startsWith('recorder: cannot write events (network: cannot reach the API at http:'),
      ),
    ).toBe(true);
    expect(lines.some((l) => l.level === 'info' && l.message.startsWith('recorder: writes succeed again'))).toBe(true);
  },
);

test(
  'a refused token: an error naming the token, logged at once, retried within retryForMs, then counted failed ' +
    '(never silently dropped)',
  async () => {
    const site = newSite();
    const { logger, lines } = capture();
    const failed: number[] = [];
    const errors: unknown[] = [];
    const recorder = createRecorder({
      sink: apiSink({ apiUrl: api.url, token: 'th_revoked-or-wrong', logger }),
      logger,
      retryForMs: 1_500,
      retryInitialDelayMs: 100,
      onFailed: (n) => failed.push(n),
      onError: (err) => errors.push(err),
    });
    for (let i = 0; i < 3; i++) recorder.record({ ts: Date.now(), site, status: 200, latencyMs: 5 });
    await recorder.close();
    expect(failed).toEqual([3]);
    expect(errors.length).toBeGreaterThan(1);
    expect(errors[0]).toMatchObject({ status: 401, permanent: false });
    expect(
      lines.filter(
        (l) =>
          l.level === 'error' &&
          /^recorder: the API refused the token \(401: .*\): pass apiSink a valid token with the ingest scope/.test(
            l.message,
          ),
      ),
    ).toHaveLength(1);
    expect(recorder.stats()).toMatchObject({ recorded: 3, failed: 3, stored: 0 });
    expect(await storedIds(site)).toEqual([]);
  },
);

test('bad options fail at once with one line naming the option', () => {
  expect(() => apiSink({ apiUrl: 'localhost:8787', token: ingest })).toThrow(
    'apiSink: apiUrl: must start with http:// or https:// (got "localhost:8787")',
  );
  expect(() => apiSink({ apiUrl: api.url, token: '' })).toThrow(
    /^apiSink: token is empty; pass a token with the ingest scope/,
  );
  expect(() => apiSink({ apiUrl: api.url, token: ingest, maxBodyBytes: 0 })).toThrow(
    'apiSink: maxBodyBytes: must be a whole number ≥ 1 (got 0)',
  );
});
