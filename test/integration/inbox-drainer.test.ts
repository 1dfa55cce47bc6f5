/**
 * The event inbox's drainer (server/api/inbox-drainer.ts) on a real PostgreSQL, in a private database (nothing
 * else drains it): woken by NOTIFY (the poll set too slow to matter), it stores a batch and deletes its row;
 * what the store refuses is logged with the batch id and counted, not dropped; a batch the store cannot
 * take now stays in the inbox and is stored once it can; two drainers on one inbox store each batch once.
 * Rows are written by the crawler package's own sink (`postgresSink`), or — for what a crawler role could
 * insert that the sink would not — by a plain INSERT. Last, the API as `target-health api` runs it drains
 * the inbox through its ingest threads and counts it in `/metrics`.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { postgresSink } from '@target-health/crawler/postgres';
import { InboxDrainer, type DrainResult } from '../../server/api/inbox-drainer';
import { ingestBody } from '../../server/api/events-batch';
import { createIngester } from '../../server/db/signal-store/ingest';
import { inboxBacklog } from '../../server/db/signal-store/inbox';
import { createLogger } from '../../server/logging/logger';
import { buildApi } from '../../server/api/server';
import { apiIngestThreads } from '../../server/api/start-api';
import { apiEnvSchema } from '../../server/api/settings';
import { createToken } from '../../server/api/tokens';
import { join } from 'node:path';
import { ROOT } from '../kit/processes';
import { testLogger } from '../kit/services';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env, eventually } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

const DAY = 86_400_000;
const QUIET = { info: () => undefined, warn: () => undefined, error: () => undefined };

let db: PrivateDatabase;
beforeAll(async () => {
  db = await privateDatabase(env('DATABASE_URL'));
});
afterAll(async () => {
  await db.drop();
});

interface Harness {
  drainer: InboxDrainer;
  logs: Array<Record<string, unknown>>;
  counted: Record<string, number>;
  waits: number[];
  results: DrainResult[];
}

/** A drainer as the API makes one (its in-process ingester), logging into `logs`, counting into `counted`. */
function drainer(pollMs: number): Harness {
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const counted: Record<string, number> = {};
  const add = (key: string, n = 1) => void (counted[key] = (counted[key] ?? 0) + n);
  const waits: number[] = [];
  const results: DrainResult[] = [];
  const ingester = createIngester(db.pool, { minuteDays: 3 });
  const d = new InboxDrainer({
    pool: db.pool,
    logger: createLogger('info', 'test-inbox', sink),
    store: async (lines) => {
      const r = await ingestBody(ingester, { lines }, Date.now());
      results.push(r);
      return r;
    },
    metrics: {
      batches: (result) => add(`batches:${result}`),
      events: (result, n) => add(`events:${result}`, n),
      waited: (s) => waits.push(s),
    },
    pollMs,
    retryMaxMs: 500,
  });
  d.start();
  return { drainer: d, logs, counted, waits, results };
}

const inboxRows = async () => (await inboxBacklog(db.pool)).batches;
const storedOf = async (site: string) =>
  Number(
    (await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [site])).rows[0]!.n,
  );

test(
  'woken by NOTIFY: a batch written by postgresSink ' + 'is stored within a second or so, and its row deleted',
  async () => {
    const h = drainer(3_600_000);
    const sink = postgresSink({ connectionString: db.url, logger: QUIET });
    try {
      // Listening before the write (its LISTEN, then a first look at the inbox).
      await eventually(() => Promise.resolve(h.drainer.status().listening ? true : undefined), 'the drainer listening');
      const site = `notify-${randomUUID().slice(0, 8)}.example.com`;
      const events = Array.from({ length: 200 }, (_, i) => ({ ts: Date.now() - i, site, status: 200, latencyMs: 20 }));
      const written = Date.now();
      expect(await sink.write({ events, eventIds: events.map((_, i) => `n${i}`) })).toEqual({
        accepted: 200,
        inserted: 200,
        duplicates: 0,
        rejected: [],
      });
      await eventually(
        async () => ((await storedOf(site)) === 200 && (await inboxRows()) === 0 ? true : undefined),
        'the batch stored',
        10_000,
      );
      const seen = Date.now() - written;
      process.stdout.write(
        `[inbox-drainer] postgresSink write → 200 events visible in the store: ${seen} ms (drainer's own wait: ` +
          `${(h.waits[0]! * 1000).toFixed(0)} ms)\n`,
      );
      // Far below the poll (an hour): the notification woke it.
      expect(seen).toBeLessThan(5_000);
      expect(h.counted).toEqual({ 'batches:drained': 1, 'events:inserted': 200 });
    } finally {
      await sink.close();
      await h.drainer.close();
    }
  },
);

test('events the store refuses are logged with the batch id and counted; the rest of the batch is stored', async () => {
  const h = drainer(200);
  try {
    const site = `refused-${randomUUID().slice(0, 8)}.example.com`;
    // What a crawler role could insert and postgresSink would not: a line that is not JSON, an event the
    // package's schema takes but the store's horizon does not (40 days old).
    const lines = [
      JSON.stringify({ eventId: 'ok-1', ts: Date.now(), site, status: 200, latencyMs: 10 }),
      'not json',
      JSON.stringify({ eventId: 'old-1', ts: Date.now() - 40 * DAY, site, status: 200, latencyMs: 10 }),
    ];
    await db.pool.query('INSERT INTO event_inbox (batch_id, events, event_count) VALUES ($1, $2, 3)', [
      'b1:refused-test',
      gzipSync(`${lines.join('\n')}\n`),
    ]);
    await eventually(
      async () => ((await inboxRows()) === 0 && h.results.length === 1 ? true : undefined),
      'the batch drained',
    );
    expect(await storedOf(site)).toBe(1);
    expect(h.counted).toEqual({ 'batches:drained': 1, 'events:inserted': 1, 'events:rejected': 2 });
    const warning = h.logs.find((l) => l.batchId === 'b1:refused-test');
    expect(warning).toMatchObject({
      level: 40,
      rejected: 2,
      stored: 1,
      sample: [
        { line: 2, errors: [expect.stringMatching(/^not valid JSON/)] },
        { line: 3, errors: [expect.stringMatching(/^ts: is .* before now/)] },
      ],
    });
    expect(String(warning!.msg)).toMatch(
      /^inbox: the store refused 2 of the 3 events of batch b1:refused-test \(first, line 2: not valid JSON/,
    );
  } finally {
    await h.drainer.close();
  }
});

test(
  'a row no sink wrote (not gzip) cannot be read: ' + 'its events are counted as refused, it is logged and deleted',
  async () => {
    const h = drainer(200);
    try {
      await db.pool.query('INSERT INTO event_inbox (batch_id, events, event_count) VALUES ($1, $2, 7)', [
        'b1:garbage-test',
        Buffer.from('{"not":"gzip"}\n'),
      ]);
      await eventually(
        async () => ((await inboxRows()) === 0 && (h.counted['events:rejected'] ?? 0) === 7 ? true : undefined),
        'the row refused',
      );
      expect(h.results).toEqual([]);
      const error = h.logs.find((l) => l.batchId === 'b1:garbage-test');
      expect(error).toMatchObject({ level: 50, eventCount: 7 });
      expect(String(error!.msg)).toMatch(
        /^inbox: batch b1:garbage-test cannot be read \(.*\): its 7 events are refused and the row deleted/,
      );
    } finally {
      await h.drainer.close();
    }
  },
);

test('a batch the store cannot take now stays in the inbox and is stored once it can', async () => {
  const site = `later-${randomUUID().slice(0, 8)}.example.com`;
  const fn = `th_test_refuse_${randomUUID().slice(0, 8)}`;
  // Not the data's fault (SQLSTATE P0001, as a full disk or a failing trigger would be): the ingester fails the batch.
  await db.pool.query(
    `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk quota exceeded ` +
      `(test)'; END $$`,
  );
  await db.pool.query(
    `CREATE TRIGGER ${fn} BEFORE INSERT ON request_events FOR EACH ROW WHEN (NEW.site = '${site}') EXECUTE ` +
      `FUNCTION ${fn}()`,
  );
  const h = drainer(200);
  const sink = postgresSink({ connectionString: db.url, logger: QUIET });
  try {
    const events = Array.from({ length: 30 }, (_, i) => ({ ts: Date.now() - i, site, status: 200, latencyMs: 20 }));
    await sink.write({ events, eventIds: events.map((_, i) => `l${i}`) });
    await eventually(
      () => Promise.resolve((h.counted['batches:failed'] ?? 0) >= 2 ? true : undefined),
      'two failed attempts',
    );
    expect(await inboxRows()).toBe(1);
    expect(await storedOf(site)).toBe(0);
    expect(
      h.logs.some((l) =>
        joinRegExp(
          /^inbox: batch b1:[0-9a-f]{64} \(30 events\) could not be stored now: /,
          /.*disk quota exceeded \(test\).*; it stays in the inbox; retrying/,
        ).test(String(l.msg)),
      ),
    ).toBe(true);
    await db.pool.query(`DROP TRIGGER ${fn} ON request_events`);
    await eventually(async () => ((await inboxRows()) === 0 ? true : undefined), 'the batch stored after the fix');
    expect(await storedOf(site)).toBe(30);
    expect(h.counted['events:inserted']).toBe(30);
  } finally {
    await sink.close();
    await h.drainer.close();
    await db.pool.query(`DROP TRIGGER IF EXISTS ${fn} ON request_events`);
    await db.pool.query(`DROP FUNCTION ${fn}()`);
  }
});

test('two drainers on one inbox (FOR UPDATE SKIP LOCKED) store every batch once and share the work', async () => {
  const site = `shared-${randomUUID().slice(0, 8)}.example.com`;
  const sink = postgresSink({ connectionString: db.url, logger: QUIET });
  // 40 batches of 50 waiting before either drainer starts.
  for (let b = 0; b < 40; b++) {
    const events = Array.from({ length: 50 }, (_, i) => ({
      ts: Date.now() - b * 50 - i,
      site,
      status: 200,
      latencyMs: 20,
    }));
    await sink.write({ events, eventIds: events.map((_, i) => `s${b}-${i}`) });
  }
  await sink.close();
  expect(await inboxRows()).toBe(40);
  const a = drainer(200);
  const b = drainer(200);
  try {
    await eventually(
      async () =>
        (await inboxRows()) === 0 && a.drainer.status().inFlight + b.drainer.status().inFlight === 0 ? true : undefined,
      'the inbox drained',
    );
  } finally {
    await Promise.all([a.drainer.close(), b.drainer.close()]);
  }
  expect(await storedOf(site)).toBe(2_000);
  const batches = [...a.results, ...b.results];
  // Each batch taken once: nothing had to be ignored as a repeat.
  expect(batches.length).toBe(40);
  expect(batches.reduce((n, r) => n + r.duplicates, 0)).toBe(0);
  expect(a.results.length).toBeGreaterThan(0);
  expect(b.results.length).toBeGreaterThan(0);
});

test('the API drains the inbox through its ingest threads and counts it in /metrics', async () => {
  const settings = apiEnvSchema.parse({ TH_API_PORT: '0' });
  const app = await buildApi({
    pool: db.pool,
    temporal: () => Promise.reject(new Error('no Temporal in this test')),
    taskQueue: 'unused',
    logger: testLogger,
    settings,
    ingestThreads: {
      ...apiIngestThreads(join(ROOT, 'dist', 'server', 'ingest', 'ingest-worker.js'), db.url),
      threads: 2,
    },
  });
  const sink = postgresSink({ connectionString: db.url, logger: QUIET });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const site = `api-${randomUUID().slice(0, 8)}.example.com`;
    const events = Array.from({ length: 300 }, (_, i) => ({
      ts: Date.now() - i,
      site,
      status: i % 10 === 0 ? 403 : 200,
      latencyMs: 20,
    }));
    await sink.write({ events, eventIds: events.map((_, i) => `a${i}`) });
    await eventually(
      async () => ((await storedOf(site)) === 300 && (await inboxRows()) === 0 ? true : undefined),
      'the API to drain the batch',
    );
    const { token } = await createToken(db.pool, `reader-${randomUUID().slice(0, 8)}`, ['read']);
    const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(text).toMatch(/^th_inbox_events_total\{result="inserted"\} 300$/m);
    expect(text).toMatch(/^th_inbox_batches_total\{result="drained"\} 1$/m);
    expect(text).toMatch(/^th_inbox_wait_seconds_count 1$/m);
  } finally {
    await sink.close();
    await app.close();
  }
});
