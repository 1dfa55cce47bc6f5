/**
 * The signal store on the real PostgreSQL: classification of realistic pages, rollups equal to the
 * raw-event computation, window and baseline edges, idempotent re-ingest, rejected lines, retention.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createIngester,
  applyRetention,
  readSiteWindows,
  retentionPolicySchema,
  listPartitions,
  DEFAULT_WINDOW_SPEC,
} from '../../server/db/signal-store';
import { OTHER_LABEL, OTHER_PAGE_TYPE, OTHER_ROUTES } from '../../server/db/signal-store/aggregate';
import { DEFAULT_CARDINALITY_CAPS } from '../../server/db/signal-store/cardinality';
import { LATENCY_HISTOGRAM, nearestRank } from '../../core/signals/histogram';
import { EMBEDDED_POSTGRES_SETTINGS } from '../../stack/embedded-postgres';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env } from '../kit/services';
import { createPool } from '../../server/db/pool';

// This file adds triggers to the store's tables: it works in a database of its own.
let db: PrivateDatabase;
beforeAll(async () => {
  db = await privateDatabase(env('DATABASE_URL'));
});
afterAll(async () => db.drop());

const page = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'pages', name), 'utf8');
const newSite = () => `store-${randomUUID().slice(0, 8)}.example.com`;
const HOUR = 3_600_000;
const DAY = 86_400_000;

test('each outcome class is recognised from realistic pages and stored with its rule', async () => {
  const site = newSite();
  const ingester = createIngester(db.pool);
  const ts = Date.now();
  const cases: Array<[Record<string, unknown>, string, string]> = [
    // Crawlers send the first KBs of the body and the full size: a real product page is far above 8 KB.
    [{ status: 200, bodySample: page('product-page.html'), bytes: 148_213 }, 'ok', 'status'],
    [{ status: 403 }, 'hard_block', 'status'],
    [{ status: 429 }, 'hard_block', 'status'],
    [{ networkError: 'connection_reset' }, 'hard_block', 'network_error'],
    [{ status: 403, bodySample: page('cloudflare-just-a-moment.html') }, 'challenge', 'challenge_marker'],
    [{ status: 503, bodySample: page('datadome-captcha.html') }, 'challenge', 'challenge_marker'],
    [{ status: 200, bodySample: page('perimeterx-press-and-hold.html') }, 'challenge', 'challenge_marker'],
    [{ status: 200, bodySample: page('generic-unusual-traffic.html') }, 'soft_block', 'block_marker'],
    [{ status: 200, bodySample: page('article-mentions-blocked.html'), bytes: 96_000 }, 'ok', 'status'],
    [{ networkError: 'timeout' }, 'error', 'network_error'],
    [{ status: 500 }, 'error', 'status'],
  ];
  const result = await ingester.ingest(
    cases.map(([fields], i) => ({ eventId: `c${i}`, ts: ts + i, site, latencyMs: 100, ...fields })),
  );
  expect(result).toMatchObject({ accepted: cases.length, inserted: cases.length, duplicates: 0, rejected: [] });
  const { rows } = await db.pool.query<{ event_id: string; outcome: string; rule: string }>(
    'SELECT event_id, outcome, rule FROM request_events WHERE site = $1',
    [site],
  );
  const byId = new Map(rows.map((r) => [r.event_id, r]));
  cases.forEach(([, outcome, rule], i) =>
    expect([i, byId.get(`c${i}`)?.outcome, byId.get(`c${i}`)?.rule]).toEqual([i, outcome, rule]),
  );
});

test('soft blocks by size and by empty extraction use the norms learned from earlier traffic', async () => {
  const site = newSite();
  const ingester = createIngester(db.pool);
  const t0 = Date.now() - 2 * DAY;
  // 40 normal product pages of ~50 KB that each yield records: the norm.
  await ingester.ingest(
    Array.from({ length: 40 }, (_, i) => ({
      ts: t0 + i * 1000,
      site,
      pageType: 'product',
      status: 200,
      latencyMs: 90,
      bytes: 50_000 + i * 10,
      extraction: { result: 'ok', validRecords: 1 },
    })),
  );
  ingester.contexts.invalidate(site);
  const now = Date.now();
  await ingester.ingest([
    {
      eventId: 'tiny',
      ts: now,
      site,
      pageType: 'product',
      status: 200,
      latencyMs: 80,
      bytes: 2_000,
      extraction: { result: 'ok', validRecords: 1 },
    },
    {
      eventId: 'empty',
      ts: now + 1,
      site,
      pageType: 'product',
      status: 200,
      latencyMs: 80,
      bytes: 49_000,
      extraction: { result: 'empty' },
    },
    {
      eventId: 'normal',
      ts: now + 2,
      site,
      pageType: 'product',
      status: 200,
      latencyMs: 80,
      bytes: 51_000,
      extraction: { result: 'ok', validRecords: 1 },
    },
  ]);
  const { rows } = await db.pool.query<{ event_id: string; outcome: string; rule: string }>(
    "SELECT event_id, outcome, rule FROM request_events WHERE site = $1 AND event_id IN ('empty', 'normal', " +
      "'tiny') ORDER BY event_id",
    [site],
  );
  expect(rows).toEqual([
    { event_id: 'empty', outcome: 'soft_block', rule: 'empty_extraction' },
    { event_id: 'normal', outcome: 'ok', rule: 'status' },
    { event_id: 'tiny', outcome: 'soft_block', rule: 'size_norm' },
  ]);
});

/** A deterministic pseudo-random stream (no Math.random: the test must be repeatable). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('rollups equal the raw-event computation; p95 within the histogram error', async () => {
  const site = newSite();
  const ingester = createIngester(db.pool);
  const rand = lcg(42);
  const start = Date.now() - 3 * DAY;
  const routes = [{ country: 'DE', pool: 'res' }, { country: 'US', pool: 'dc' }, { country: 'FR' }, {}];
  const statuses = [200, 200, 200, 200, 200, 403, 429, 500];
  const events = Array.from({ length: 6_000 }, (_, i) => ({
    eventId: `r${i}`,
    ts: start + Math.floor(rand() * 3 * DAY),
    site,
    route: routes[Math.floor(rand() * routes.length)],
    status: statuses[Math.floor(rand() * statuses.length)],
    latencyMs: Math.round(20 + rand() ** 3 * 5_000),
    bytes: Math.floor(rand() * 100_000),
    retries: Math.floor(rand() * 3),
    extraction: { result: 'ok', validRecords: Math.floor(rand() * 5) },
  }));
  for (let i = 0; i < events.length; i += 1_000) await ingester.ingest(events.slice(i, i + 1_000));

  for (const table of ['rollup_minute', 'rollup_hour', 'rollup_day']) {
    const level = table.replace('rollup_', '');
    const raw = await db.pool.query(
      `SELECT date_trunc('${level}', ts) AS bucket,
              coalesce(country,'') || '|' || coalesce(pool,'') || '|' || coalesce(session,'') AS route_key,
              count(*)::bigint AS requests, count(*) FILTER (WHERE outcome = 'hard_block')::bigint AS hard_blocks,
              count(*) FILTER (WHERE outcome = 'error')::bigint AS errors, sum(retries)::bigint AS retries,
              sum(bytes)::bigint AS bytes,
              sum(valid_records)::bigint AS valid_records
       FROM request_events WHERE site = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [site],
    );
    const rolled = await db.pool.query(
      `SELECT bucket, route_key, requests, hard_blocks, errors, retries, bytes, valid_records FROM ${table} ` +
        `WHERE site = $1 AND route_key <> '*' ORDER BY 1, 2`,
      [site],
    );
    expect(rolled.rows).toEqual(raw.rows);
  }

  // The all-routes latency histogram over the whole period against the raw p95.
  const { rows: lat } = await db.pool.query<{ latency_ms: number }>(
    'SELECT latency_ms FROM request_events WHERE site = $1',
    [site],
  );
  // A tick a minute from now: the minute holding the newest events has passed.
  const windows = await readSiteWindows(db.pool, site, {
    asOf: new Date(Date.now() + 60_000),
    currentWindowMs: 4 * DAY,
    baselineMs: 16 * HOUR,
    excludeRecentMs: 0,
  });
  const rawP95 = nearestRank(
    lat.map((r) => r.latency_ms),
    0.95,
  )!;
  expect(windows.current.requests).toBe(6_000);
  expect(Math.abs(windows.current.p95LatencyMs - rawP95) / rawP95).toBeLessThanOrEqual(LATENCY_HISTOGRAM.relativeError);
  expect(windows.current.hardBlocks).toBe(events.filter((e) => e.status === 403 || e.status === 429).length);
  expect(windows.current.routes).toHaveLength(4);
});

test('window and baseline edges: the most recent day is excluded, the baseline is exactly 14 days', async () => {
  const site = newSite();
  const asOf = new Date(Date.UTC(2026, 10, 20, 12, 30, 15));
  // The ingester's clock at asOf: the events are inside its horizon whatever today's date is.
  const ingester = createIngester(db.pool, { clock: () => asOf.getTime() });
  const H = Date.UTC(2026, 10, 20, 12); // asOf floored to the hour
  const at = (ms: number, id: string) => ({ eventId: id, ts: ms, site, status: 200, latencyMs: 100 });
  await ingester.ingest([
    at(H - DAY - 1, 'baseline-last-ms'), // inside: the baseline ends one day before H
    at(H - DAY, 'recent-day-first-ms'), // excluded: the most recent day
    at(H - 15 * DAY, 'baseline-first-ms'), // inside: exactly 14 days before the end
    at(H - 15 * DAY - 1, 'too-old'), // outside
    at(H - 8 * DAY + 5 * HOUR, 'middle'), // inside, read from a day rollup
    at(asOf.getTime(), 'current-now'), // 12:30:15: in the minute the tick falls in, not yet passed: outside
    at(asOf.getTime() - 60_000, 'last-whole-minute'), // 12:29:15: the last whole minute, inside
    at(asOf.getTime() - 15 * 60_000, 'first-minute'), // 12:15:15: minute 12:15, the window's first
    at(asOf.getTime() - 16 * 60_000, 'before-current'), // 12:14:15: just before the window (12:15-12:30)
  ]);
  const w = await readSiteWindows(db.pool, site, { asOf, ...DEFAULT_WINDOW_SPEC });
  expect(w.bounds.baseline).toEqual({ from: new Date(H - 15 * DAY), to: new Date(H - DAY) });
  expect(w.bounds.baseline.to.getTime() - w.bounds.baseline.from.getTime()).toBe(14 * DAY);
  // [asOf − 15 min, asOf) over whole minutes that have passed.
  expect(w.bounds.current).toEqual({
    from: new Date(Date.UTC(2026, 10, 20, 12, 15)),
    to: new Date(Date.UTC(2026, 10, 20, 12, 30)),
  });
  expect(w.baseline?.requests).toBe(3); // baseline-last-ms, baseline-first-ms, middle
  expect(w.current.requests).toBe(2); // last-whole-minute, first-minute
});

test('a repeated batch is ignored; a partly repeated one adds only the new events', async () => {
  const site = newSite();
  const ingester = createIngester(db.pool);
  const now = Date.now();
  const batch = Array.from({ length: 100 }, (_, i) => ({
    eventId: `e${i}`,
    ts: now - i * 1000,
    site,
    status: i % 10 === 0 ? 403 : 200,
    latencyMs: 50 + i,
  }));
  expect(await ingester.ingest(batch)).toMatchObject({ inserted: 100, duplicates: 0 });
  expect(await ingester.ingest(batch)).toMatchObject({ inserted: 0, duplicates: 100 });
  const more = [
    ...batch.slice(0, 10),
    { eventId: 'new-1', ts: now, site, status: 200, latencyMs: 10 },
    { eventId: 'new-1', ts: now, site, status: 200, latencyMs: 10 },
  ];
  expect(await ingester.ingest(more)).toMatchObject({ accepted: 12, inserted: 1, duplicates: 11 });
  const w = await readSiteWindows(db.pool, site, {
    asOf: new Date(now + 60_000),
    currentWindowMs: 10 * 60_000,
    baselineMs: DAY,
    excludeRecentMs: DAY,
  });
  expect(w.current.requests).toBe(101);
  expect(w.current.hardBlocks).toBe(10);
  const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [
    site,
  ]);
  expect(Number(rows[0]!.n)).toBe(101);
});

test('a batch that loses a deadlock is run again, whole, and counted once', async () => {
  const site = newSite();
  // The first attempt fails the way a lost deadlock does (SQLSTATE 40P01); a sequence, which a rollback
  // does not undo, lets the second attempt through.
  const name = `th_test_deadlock_${randomUUID().slice(0, 8)}`;
  await db.pool.query(`CREATE SEQUENCE ${name}`);
  await db.pool.query(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       IF nextval('${name}') = 1 THEN RAISE EXCEPTION 'deadlock detected (test)' USING ERRCODE = '40P01'; END IF;
       RETURN NEW; END $$`,
  );
  await db.pool.query(
    `CREATE TRIGGER ${name} BEFORE INSERT ON request_events FOR EACH ROW WHEN (NEW.site = '${site}') EXECUTE ` +
      `FUNCTION ${name}()`,
  );
  try {
    const now = Date.now();
    const batch = Array.from({ length: 50 }, (_, i) => ({
      eventId: `d${i}`,
      ts: now - i * 1000,
      site,
      status: 200,
      latencyMs: 20,
    }));
    expect(await createIngester(db.pool).ingest(batch)).toMatchObject({ accepted: 50, inserted: 50, duplicates: 0 });
    const { rows } = await db.pool.query<{ raw: string; rolled: string; attempts: string }>(
      `SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw,
              (SELECT sum(requests) FROM rollup_minute WHERE site = $1 AND route_key = '*') AS rolled,
              (SELECT last_value FROM ${name}) AS attempts`,
      [site],
    );
    // 1 failed row on the first attempt + 50 rows on the second.
    expect(rows[0]).toEqual({ raw: '50', rolled: '50', attempts: '51' });
  } finally {
    await db.pool.query(`DROP TRIGGER ${name} ON request_events`);
    await db.pool.query(`DROP FUNCTION ${name}()`);
    await db.pool.query(`DROP SEQUENCE ${name}`);
  }
});

test(
  'rows staged for the rollups go with a rolled-back attempt: the retry on the same connection counts each event ' +
    'once',
  async () => {
    const site = newSite();
    // One connection, so the retry reuses the staging tables of the failed attempt. It fails at the hour
    // rollup, after the minute rows were staged and added and the hour rows staged.
    const pool = createPool(db.url, 1);
    const name = `th_test_stage_${randomUUID().slice(0, 8)}`;
    await db.pool.query(`CREATE SEQUENCE ${name}`);
    await db.pool.query(
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       IF nextval('${name}') = 1 THEN RAISE EXCEPTION 'deadlock detected (test)' USING ERRCODE = '40P01'; END IF;
       RETURN NEW; END $$`,
    );
    await db.pool.query(
      `CREATE TRIGGER ${name} BEFORE INSERT ON rollup_hour FOR EACH ROW WHEN (NEW.site = '${site}') EXECUTE ` +
        `FUNCTION ${name}()`,
    );
    try {
      const ingester = createIngester(pool);
      const now = Date.now();
      const batch = (from: number) =>
        Array.from({ length: 40 }, (_, i) => ({
          eventId: `s${from + i}`,
          ts: now - (from + i) * 61_000,
          site,
          route: { country: 'DE' },
          status: 200,
          latencyMs: 20 + i,
        }));
      expect(await ingester.ingest(batch(0))).toMatchObject({ inserted: 40 });
      // The next batch on that connection starts from empty staging tables too (ON COMMIT DELETE ROWS).
      expect(await ingester.ingest(batch(40))).toMatchObject({ inserted: 40 });
      const { rows } = await db.pool.query<{ level: string; requests: string }>(
        `SELECT 'minute' AS level, sum(requests) AS requests FROM rollup_minute WHERE site = $1 AND route_key = '*'
       UNION ALL SELECT 'hour', sum(requests) FROM rollup_hour WHERE site = $1 AND route_key = '*'
       UNION ALL SELECT 'day', sum(requests) FROM rollup_day WHERE site = $1 AND route_key <> '*'`,
        [site],
      );
      expect(Object.fromEntries(rows.map((r) => [r.level, Number(r.requests)]))).toEqual({
        minute: 80,
        hour: 80,
        day: 80,
      });
    } finally {
      await pool.end();
      await db.pool.query(`DROP TRIGGER ${name} ON rollup_hour`);
      await db.pool.query(`DROP FUNCTION ${name}()`);
      await db.pool.query(`DROP SEQUENCE ${name}`);
    }
  },
);

test('invalid events are reported with line and field while the valid ones land', async () => {
  const site = newSite();
  const ingester = createIngester(db.pool);
  const now = Date.now();
  const result = await ingester.ingest(
    [
      { ts: now, site, status: 200, latencyMs: 5 },
      { ts: now, site, status: 200 },
      { ts: now, site: 'not a host', status: 200, latencyMs: 5 },
      { ts: now, site, status: 200, latencyMs: 5, statusCode: 200 },
      { ts: now, site, networkError: 'timeout', latencyMs: 30_000 },
    ],
    10,
  );
  expect(result.accepted).toBe(2);
  expect(result.inserted).toBe(2);
  expect(result.rejected.map((r) => r.line)).toEqual([11, 12, 13]);
  expect(result.rejected[0]!.errors.join(' ')).toMatch(/latencyMs/);
  expect(result.rejected[1]!.errors.join(' ')).toMatch(/site/);
  expect(result.rejected[2]!.errors.join(' ')).toMatch(/statusCode/);
});

test('retention drops whole partitions older than the policy and keeps the rest', async () => {
  const site = newSite();
  // Far in the past, so other test files' data (around now) is never in range; the ingester's clock
  // is set there, or its horizon would refuse such old events.
  const base = Date.UTC(2001, 2, 1);
  const ingester = createIngester(db.pool, { clock: () => base + 10 * DAY });
  await ingester.ingest([0, 1, 5, 9].map((d) => ({ ts: base + d * DAY + HOUR, site, status: 200, latencyMs: 10 })));
  const now = new Date(base + 10 * DAY);
  const policy = retentionPolicySchema.parse({ rawDays: 3, minuteDays: 3 });
  const before = (await listPartitions(db.pool, 'request_events'))
    .filter((p) => p.start.getUTCFullYear() === 2001)
    .map((p) => p.name);
  expect(before).toEqual([
    'request_events_p20010301',
    'request_events_p20010302',
    'request_events_p20010306',
    'request_events_p20010310',
  ]);
  const dryRun = await applyRetention(db.pool, policy, now, true);
  expect(dryRun.request_events).toEqual([
    'request_events_p20010301',
    'request_events_p20010302',
    'request_events_p20010306',
  ]);
  expect(
    (await listPartitions(db.pool, 'request_events')).filter((p) => p.start.getUTCFullYear() === 2001),
  ).toHaveLength(4);
  const dropped = await applyRetention(db.pool, policy, now);
  expect(dropped.request_events).toEqual(dryRun.request_events);
  expect(dropped.rollup_minute).toEqual([
    'rollup_minute_p20010301',
    'rollup_minute_p20010302',
    'rollup_minute_p20010306',
  ]);
  // Hour and day rollups are kept far longer: the baseline still has the older days.
  expect(dropped.rollup_hour).toEqual([]);
  const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [
    site,
  ]);
  expect(Number(rows[0]!.n)).toBe(1);
  const { rows: days } = await db.pool.query<{ n: string }>(
    "SELECT sum(requests) AS n FROM rollup_day WHERE site = $1 AND route_key = '*'",
    [site],
  );
  expect(Number(days[0]!.n)).toBe(4);
});

test('with a minute retention, ingest writes minute rows only for the days retention keeps (a back-fill)', async () => {
  const site = newSite();
  // 2002, so that no other test's partitions are in range; the clock at day 10, 12:00.
  const base = Date.UTC(2002, 2, 1);
  const now = base + 10 * DAY + 12 * HOUR;
  const ingester = createIngester(db.pool, { clock: () => now, minuteDays: 3 });
  // One batch spanning the back-fill: days 0, 5, 6 (outside), 7 (the first day kept: it ends 2.5 days ago), 10.
  const days = [0, 5, 6, 7, 10];
  const result = await ingester.ingest(
    days.flatMap((d) =>
      [1, 2].map((k) => ({
        ts: base + d * DAY + k * HOUR,
        site,
        status: k === 1 ? 200 : 403,
        latencyMs: 10,
        route: { country: 'de' },
      })),
    ),
  );
  expect(result).toMatchObject({ inserted: 10, rejected: [] });
  const sumOf = async (table: string) =>
    (
      await db.pool.query<{ day: string; n: string }>(
        `SELECT to_char(bucket AT TIME ZONE 'UTC', 'DD') AS day, sum(requests) AS n FROM ${table} WHERE site = ` +
          `$1 AND route_key = '*' GROUP BY 1 ORDER BY 1`,
        [site],
      )
    ).rows.map((r) => `${r.day}:${r.n}`);
  // Raw, hour and day rows for every event; minute rows (all routes and the route's) for days 7 and 10 only.
  expect(await sumOf('rollup_hour')).toEqual(['01:2', '06:2', '07:2', '08:2', '11:2']);
  expect(await sumOf('rollup_day')).toEqual(['01:2', '06:2', '07:2', '08:2', '11:2']);
  expect(await sumOf('rollup_minute')).toEqual(['08:2', '11:2']);
  const { rows } = await db.pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM rollup_minute WHERE site = $1 AND route_key <> '*'",
    [site],
  );
  expect(Number(rows[0]!.n)).toBe(4);
  // No empty minute partitions for the days left out, and retention at the same moment drops nothing more.
  const minuteParts = (await listPartitions(db.pool, 'rollup_minute'))
    .filter((p) => p.start.getUTCFullYear() === 2002)
    .map((p) => p.name);
  expect(minuteParts).toEqual(['rollup_minute_p20020308', 'rollup_minute_p20020311']);
  const wouldDrop = await applyRetention(db.pool, retentionPolicySchema.parse({ minuteDays: 3 }), new Date(now), true);
  expect(wouldDrop.rollup_minute.filter((n) => n.includes('2002'))).toEqual([]);
});

test(
  'a new partition is made while other ingest transactions are in flight: ' + 'no wait for them, indexes attached',
  async () => {
    const site = newSite();
    // 2003, apart from every other test's partitions.
    const day1 = Date.UTC(2003, 2, 1);
    const ingester = createIngester(db.pool, { clock: () => day1 + 2 * DAY });
    await ingester.ingest([{ eventId: 'a', ts: day1 + HOUR, site, status: 200, latencyMs: 10 }]);
    // A writer in the middle of its batch: rows written to the raw table and a rollup, not committed.
    const writer = await db.pool.connect();
    const maker = await db.pool.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(
        "INSERT INTO request_events (ts, site, event_id, latency_ms, outcome, rule) VALUES ($1, $2, 'b', 10, " +
          "'ok', 'status')",
        [new Date(day1 + 2 * HOUR), site],
      );
      await writer.query("INSERT INTO rollup_minute (site, bucket, route_key, requests) VALUES ($1, $2, '*', 1)", [
        site,
        new Date(day1 + 2 * HOUR),
      ]);
      // Making the next day's partitions must not wait for that writer (the old CREATE TABLE ... PARTITION
      // OF did, holding every other writer behind it): with a lock timeout, a wait would fail with 55P03.
      await maker.query('BEGIN');
      await maker.query("SET LOCAL lock_timeout = '3s'");
      for (const table of ['request_events', 'rollup_minute', 'rollup_hour', 'page_norms_day']) {
        await maker.query('SELECT th_ensure_partition($1, $2)', [table, new Date(day1 + DAY + HOUR)]);
      }
      await maker.query('COMMIT');
      await writer.query('COMMIT');
    } finally {
      writer.release();
      maker.release();
    }
    const names = (await listPartitions(db.pool, 'request_events'))
      .filter((p) => p.start.getUTCFullYear() === 2003)
      .map((p) => p.name);
    expect(names).toEqual(['request_events_p20030301', 'request_events_p20030302']);
    // Raw partitions are insert-only and short-lived: no autovacuum (migration 008); the rollups keep it.
    const { rows: options } = await db.pool.query<{ relname: string; reloptions: string[] | null }>(
      "SELECT relname, reloptions FROM pg_class WHERE relname IN ('request_events_p20030302', " +
        "'rollup_minute_p20030302') ORDER BY relname",
    );
    expect(options).toEqual([
      { relname: 'request_events_p20030302', reloptions: ['autovacuum_enabled=false'] },
      { relname: 'rollup_minute_p20030302', reloptions: null },
    ]);
    // The attached partition carries the parent's unique index: a repeated event id there is a duplicate.
    const next = [{ eventId: 'c', ts: day1 + DAY + HOUR, site, status: 200, latencyMs: 10 }];
    expect(await ingester.ingest(next)).toMatchObject({ inserted: 1, duplicates: 0 });
    expect(await ingester.ingest(next)).toMatchObject({ inserted: 0, duplicates: 1 });
    const { rows } = await db.pool.query<{ n: string }>(
      "SELECT sum(requests) AS n FROM rollup_minute WHERE site = $1 AND route_key = '*'",
      [site],
    );
    expect(Number(rows[0]!.n)).toBe(3);
  },
);

test('the embedded server runs with the write-heavy settings the store is tuned for', async () => {
  for (const [name, value] of Object.entries(EMBEDDED_POSTGRES_SETTINGS)) {
    const { rows } = await db.pool.query<{ setting: string }>(`SELECT current_setting($1) AS setting`, [name]);
    expect(`${name}=${rows[0]!.setting}`).toBe(`${name}=${value}`);
  }
});

// ---- Hostile and unlucky input -------------------------------------------------------------------

test(
  'a batch the database refuses for the data of two events: ' + 'split, the other 998 stored once, the two named',
  async () => {
    const site = newSite();
    const fn = `th_test_range_${randomUUID().slice(0, 8)}`;
    await db.pool.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'integer out of ` +
        `range (test)' USING ERRCODE = '22003'; END $$`,
    );
    await db.pool.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON request_events FOR EACH ROW WHEN (NEW.site = '${site}' AND ` +
        `NEW.latency_ms = 666) EXECUTE FUNCTION ${fn}()`,
    );
    try {
      const now = Date.now();
      const batch = Array.from({ length: 1_000 }, (_, i) => ({
        eventId: `x${i}`,
        ts: now - i,
        site,
        status: 200,
        latencyMs: i === 17 || i === 640 ? 666 : 10,
      }));
      const ingester = createIngester(db.pool);
      const result = await ingester.ingest(batch, 101);
      expect(result).toMatchObject({ accepted: 998, inserted: 998, duplicates: 0 });
      expect(result.rejected).toEqual(
        [118, 741].map((line) => ({
          line,
          errors: [
            expect.stringMatching(/^the database refused this event \(integer out of range \(test\); SQLSTATE 22003\)/),
          ],
        })),
      );
      // Sent again (a recorder retrying): the good ones are repeats, the bad ones still named.
      const again = await ingester.ingest(batch, 101);
      expect(again).toMatchObject({ accepted: 998, inserted: 0, duplicates: 998 });
      expect(again.rejected.map((r) => r.line)).toEqual([118, 741]);
    } finally {
      await db.pool.query(`DROP TRIGGER ${fn} ON request_events`);
      await db.pool.query(`DROP FUNCTION ${fn}()`);
    }
    const { rows } = await db.pool.query<{ raw: string; rolled: string }>(
      'SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw, (SELECT sum(requests) FROM ' +
        "rollup_hour WHERE site = $1 AND route_key = '*') AS rolled",
      [site],
    );
    expect(rows[0]).toEqual({ raw: '998', rolled: '998' });
  },
);

test(
  '100,000 pools on one site: ' + 'rollups keep at most the cap of routes per day, the rest in "other", totals exact',
  async () => {
    const site = newSite();
    const now = Date.now() - 10 * 60_000;
    const cap = DEFAULT_CARDINALITY_CAPS.routesPerDay;
    // Two ingesters at once (two recorders, or the CLI's worker threads), each flooding new pools.
    const flood = async (offset: number) => {
      const ingester = createIngester(db.pool);
      for (let b = 0; b < 10; b++) {
        await ingester.ingest(
          Array.from({ length: 5_000 }, (_, i) => ({
            ts: now + b * 1000 + (i % 1000),
            site,
            route: { country: 'DE', pool: `pool-${offset + b * 5_000 + i}` },
            status: i % 10 === 0 ? 403 : 200,
            latencyMs: 10,
          })),
        );
      }
    };
    await Promise.all([flood(0), flood(50_000)]);
    for (const table of ['rollup_minute', 'rollup_hour', 'rollup_day']) {
      const { rows } = await db.pool.query<{
        kept: string;
        other_rows: string;
        other: string | null;
        all: string;
        routes_sum: string;
        other_labels: string | null;
      }>(
        `SELECT count(*) FILTER (WHERE route_key NOT IN ('*', $2)) AS kept,
              count(*) FILTER (WHERE route_key = $2) AS other_rows,
              sum(requests) FILTER (WHERE route_key = $2) AS other,
              sum(requests) FILTER (WHERE route_key = '*') AS all,
              sum(requests) FILTER (WHERE route_key <> '*') AS routes_sum,
              max(pool) FILTER (WHERE route_key = $2) AS other_labels
       FROM ${table} WHERE site = $1`,
        [site, OTHER_ROUTES],
      );
      const r = rows[0]!;
      expect([table, Number(r.all), Number(r.routes_sum)]).toEqual([table, 100_000, 100_000]);
      // A route's rows over the minutes of the day are as many as its minutes; the distinct routes are capped.
      const { rows: distinct } = await db.pool.query<{ n: string }>(
        `SELECT count(DISTINCT route_key) AS n FROM ${table} WHERE site = $1 AND route_key NOT IN ('*', $2)`,
        [site, OTHER_ROUTES],
      );
      expect(Number(distinct[0]!.n)).toBeLessThanOrEqual(cap);
      expect(Number(r.other)).toBeGreaterThanOrEqual(100_000 - cap * 10);
      expect(r.other_labels).toBe(OTHER_LABEL);
    }
    // Raw events keep their true pools.
    const { rows: raw } = await db.pool.query<{ n: string }>(
      'SELECT count(DISTINCT pool) AS n FROM request_events WHERE site = $1',
      [site],
    );
    expect(Number(raw[0]!.n)).toBe(100_000);
    // The tick sees the capped routes plus "other", and every request.
    const w = await readSiteWindows(db.pool, site, {
      asOf: new Date(now + 2 * 60_000),
      currentWindowMs: 60 * 60_000,
      baselineMs: DAY,
      excludeRecentMs: DAY,
    });
    expect(w.current.requests).toBe(100_000);
    expect(w.current.routes.length).toBeLessThanOrEqual(cap + 1);
    expect(w.current.routes.find((r) => r.pool === OTHER_LABEL)?.requests).toBeGreaterThan(0);
  },
);

test('the cap is exact across concurrent ingesters; known routes keep their rows after it is reached', async () => {
  const site = newSite();
  const now = Date.now() - 60_000;
  const caps = { routesPerDay: 7, pageTypesPerDay: 3 };
  const event = (pool: number, pageType: number, i: number) => ({
    ts: now + i,
    site,
    route: { pool: `p${pool}` },
    pageType: `t${pageType}`,
    status: 200,
    latencyMs: 10,
    bytes: 5_000,
    extraction: { result: 'ok', validRecords: 1 },
  });
  // Four ingesters, each offering 6 new pools and 5 page types per batch, all at once.
  await Promise.all(
    Array.from({ length: 4 }, async (_, w) => {
      const ingester = createIngester(db.pool, { caps });
      for (let b = 0; b < 3; b++)
        await ingester.ingest(
          Array.from({ length: 30 }, (_, i) =>
            event(w * 100 + b * 10 + (i % 6), w * 10 + b * 3 + (i % 5), w * 1000 + b * 100 + i),
          ),
        );
    }),
  );
  const { rows } = await db.pool.query<{ routes: string; types: string; other_types: string }>(
    `SELECT (SELECT count(DISTINCT route_key) FROM rollup_day WHERE site = $1 AND route_key NOT IN ('*', $2)) AS routes,
            (SELECT count(DISTINCT page_type) FROM page_norms_day WHERE site = $1 AND page_type <> $3) AS types,
            (SELECT count(*) FROM page_norms_day WHERE site = $1 AND page_type = $3) AS other_types`,
    [site, OTHER_ROUTES, OTHER_PAGE_TYPE],
  );
  expect(rows[0]).toEqual({ routes: '7', types: '3', other_types: '1' });
  // A later ingester: a kept route gets its own rows, a new one goes to "other".
  const { rows: kept } = await db.pool.query<{ route_key: string; pool: string }>(
    `SELECT route_key, pool FROM rollup_day WHERE site = $1 AND route_key NOT IN ('*', $2) LIMIT 1`,
    [site, OTHER_ROUTES],
  );
  const later = createIngester(db.pool, { caps });
  await later.ingest([
    { ts: now + 5_000, site, route: { pool: kept[0]!.pool }, status: 200, latencyMs: 1 },
    { ts: now + 5_001, site, route: { pool: 'brand-new' }, status: 200, latencyMs: 1 },
  ]);
  const { rows: after } = await db.pool.query<{ route_key: string; requests: string }>(
    `SELECT route_key, requests FROM rollup_minute WHERE site = $1 AND bucket = date_trunc('minute', ` +
      `to_timestamp($2 / 1000.0)) AND route_key <> '*' ORDER BY route_key`,
    [site, now + 5_000],
  );
  expect(after.map((r) => r.route_key)).toEqual(expect.arrayContaining([kept[0]!.route_key, OTHER_ROUTES]));
  expect(after.some((r) => r.route_key.includes('brand-new'))).toBe(false);
});

test('the ingester refuses events outside its time horizon, naming them, and stores the rest', async () => {
  const site = newSite();
  const now = Date.now();
  // The ingester's clock fixed at the events' "now": the messages' wording must not depend on how long
  // a busy machine takes between stamping and validating (9 min 59.9 s reads "600 seconds").
  const result = await createIngester(db.pool, { clock: () => now }).ingest([
    { ts: now - 31 * DAY, site, status: 200, latencyMs: 1 },
    { ts: now - 29 * DAY, site, status: 200, latencyMs: 1 },
    { ts: now + 10 * 60_000, site, status: 200, latencyMs: 1 },
    { ts: Date.UTC(2099, 11, 31), site, status: 200, latencyMs: 1 },
  ]);
  expect(result).toMatchObject({ accepted: 1, inserted: 1 });
  expect(result.rejected).toEqual([
    { line: 1, errors: [expect.stringMatching(/^ts: is 31 days before now/)] },
    { line: 3, errors: [expect.stringMatching(/^ts: is 10 minutes after now/)] },
    { line: 4, errors: [expect.stringMatching(/^ts: is [\d.]+ days after now \(2099-12-31T00:00:00\.000Z/)] },
  ]);
});
