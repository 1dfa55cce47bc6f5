/**
 * The signal store on the real PostgreSQL: classification of realistic pages, rollups equal to the
 * raw-event computation, window and baseline edges, idempotent re-ingest, rejected lines, retention.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createIngester, applyRetention, readSiteWindows, retentionPolicySchema, listPartitions, DEFAULT_WINDOW_SPEC } from '../../db/signal-store';
import { LATENCY_HISTOGRAM, nearestRank } from '../../signals/histogram';
import { EMBEDDED_POSTGRES_SETTINGS } from '../../stack/embedded-postgres';
import { openHarness, type TestHarness } from '../helpers/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const page = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'pages', name), 'utf8');
const newSite = () => `store-${randomUUID().slice(0, 8)}.example.com`;
const HOUR = 3_600_000;
const DAY = 86_400_000;

test('each outcome class is recognised from realistic pages and stored with its rule', async () => {
  const site = newSite();
  const ingester = createIngester(h.pool);
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
  const result = await ingester.ingest(cases.map(([fields], i) => ({ eventId: `c${i}`, ts: ts + i, site, latencyMs: 100, ...fields })));
  expect(result).toMatchObject({ accepted: cases.length, inserted: cases.length, duplicates: 0, rejected: [] });
  const { rows } = await h.pool.query<{ event_id: string; outcome: string; rule: string }>('SELECT event_id, outcome, rule FROM request_events WHERE site = $1', [site]);
  const byId = new Map(rows.map((r) => [r.event_id, r]));
  cases.forEach(([, outcome, rule], i) => expect([i, byId.get(`c${i}`)?.outcome, byId.get(`c${i}`)?.rule]).toEqual([i, outcome, rule]));
});

test('soft blocks by size and by empty extraction use the norms learned from earlier traffic', async () => {
  const site = newSite();
  const ingester = createIngester(h.pool);
  const t0 = Date.now() - 2 * DAY;
  // 40 normal product pages of ~50 KB that each yield records: the norm.
  await ingester.ingest(
    Array.from({ length: 40 }, (_, i) => ({ ts: t0 + i * 1000, site, pageType: 'product', status: 200, latencyMs: 90, bytes: 50_000 + i * 10, extraction: { result: 'ok', validRecords: 1 } })),
  );
  ingester.contexts.invalidate(site);
  const now = Date.now();
  await ingester.ingest([
    { eventId: 'tiny', ts: now, site, pageType: 'product', status: 200, latencyMs: 80, bytes: 2_000, extraction: { result: 'ok', validRecords: 1 } },
    { eventId: 'empty', ts: now + 1, site, pageType: 'product', status: 200, latencyMs: 80, bytes: 49_000, extraction: { result: 'empty' } },
    { eventId: 'normal', ts: now + 2, site, pageType: 'product', status: 200, latencyMs: 80, bytes: 51_000, extraction: { result: 'ok', validRecords: 1 } },
  ]);
  const { rows } = await h.pool.query<{ event_id: string; outcome: string; rule: string }>('SELECT event_id, outcome, rule FROM request_events WHERE site = $1 AND event_id IS NOT NULL ORDER BY event_id', [site]);
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
  const ingester = createIngester(h.pool);
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
    const raw = await h.pool.query(
      `SELECT date_trunc('${level}', ts) AS bucket, coalesce(country,'') || '|' || coalesce(pool,'') || '|' || coalesce(session,'') AS route_key,
              count(*)::bigint AS requests, count(*) FILTER (WHERE outcome = 'hard_block')::bigint AS hard_blocks,
              count(*) FILTER (WHERE outcome = 'error')::bigint AS errors, sum(retries)::bigint AS retries, sum(bytes)::bigint AS bytes,
              sum(valid_records)::bigint AS valid_records
       FROM request_events WHERE site = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [site],
    );
    const rolled = await h.pool.query(
      `SELECT bucket, route_key, requests, hard_blocks, errors, retries, bytes, valid_records FROM ${table} WHERE site = $1 AND route_key <> '*' ORDER BY 1, 2`,
      [site],
    );
    expect(rolled.rows).toEqual(raw.rows);
  }

  // The all-routes latency histogram over the whole period against the raw p95.
  const { rows: lat } = await h.pool.query<{ latency_ms: number }>('SELECT latency_ms FROM request_events WHERE site = $1', [site]);
  const windows = await readSiteWindows(h.pool, site, { asOf: new Date(), currentWindowMs: 4 * DAY, baselineMs: 16 * HOUR, excludeRecentMs: 0 });
  const rawP95 = nearestRank(lat.map((r) => r.latency_ms), 0.95)!;
  expect(windows.current.requests).toBe(6_000);
  expect(Math.abs(windows.current.p95LatencyMs - rawP95) / rawP95).toBeLessThanOrEqual(LATENCY_HISTOGRAM.relativeError);
  expect(windows.current.hardBlocks).toBe(events.filter((e) => e.status === 403 || e.status === 429).length);
  expect(windows.current.routes).toHaveLength(4);
});

test('window and baseline edges: the most recent day is excluded, the baseline is exactly 14 days', async () => {
  const site = newSite();
  const ingester = createIngester(h.pool);
  const asOf = new Date(Date.UTC(2026, 10, 20, 12, 30, 15));
  const H = Date.UTC(2026, 10, 20, 12); // asOf floored to the hour
  const at = (ms: number, id: string) => ({ eventId: id, ts: ms, site, status: 200, latencyMs: 100 });
  await ingester.ingest([
    at(H - DAY - 1, 'baseline-last-ms'), // inside: the baseline ends one day before H
    at(H - DAY, 'recent-day-first-ms'), // excluded: the most recent day
    at(H - 15 * DAY, 'baseline-first-ms'), // inside: exactly 14 days before the end
    at(H - 15 * DAY - 1, 'too-old'), // outside
    at(H - 8 * DAY + 5 * HOUR, 'middle'), // inside, read from a day rollup
    at(asOf.getTime(), 'current-now'), // current window
    at(asOf.getTime() - 15 * 60_000, 'before-current'), // 12:15:15: minute 12:15, just before the window (12:16-12:30)
  ]);
  const w = await readSiteWindows(h.pool, site, { asOf, ...DEFAULT_WINDOW_SPEC });
  expect(w.bounds.baseline).toEqual({ from: new Date(H - 15 * DAY), to: new Date(H - DAY) });
  expect(w.bounds.baseline.to.getTime() - w.bounds.baseline.from.getTime()).toBe(14 * DAY);
  expect(w.bounds.current).toEqual({ from: new Date(Date.UTC(2026, 10, 20, 12, 16)), to: new Date(Date.UTC(2026, 10, 20, 12, 31)) });
  expect(w.baseline?.requests).toBe(3); // baseline-last-ms, baseline-first-ms, middle
  expect(w.current.requests).toBe(1); // current-now; 12:15:15 falls in minute 12:15, before the window
});

test('a repeated batch is ignored; a partly repeated one adds only the new events', async () => {
  const site = newSite();
  const ingester = createIngester(h.pool);
  const now = Date.now();
  const batch = Array.from({ length: 100 }, (_, i) => ({ eventId: `e${i}`, ts: now - i * 1000, site, status: i % 10 === 0 ? 403 : 200, latencyMs: 50 + i }));
  expect(await ingester.ingest(batch)).toMatchObject({ inserted: 100, duplicates: 0 });
  expect(await ingester.ingest(batch)).toMatchObject({ inserted: 0, duplicates: 100 });
  const more = [...batch.slice(0, 10), { eventId: 'new-1', ts: now, site, status: 200, latencyMs: 10 }, { eventId: 'new-1', ts: now, site, status: 200, latencyMs: 10 }];
  expect(await ingester.ingest(more)).toMatchObject({ accepted: 12, inserted: 1, duplicates: 11 });
  const w = await readSiteWindows(h.pool, site, { asOf: new Date(now), currentWindowMs: 10 * 60_000, baselineMs: DAY, excludeRecentMs: DAY });
  expect(w.current.requests).toBe(101);
  expect(w.current.hardBlocks).toBe(10);
  const { rows } = await h.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [site]);
  expect(Number(rows[0]!.n)).toBe(101);
});

test('a batch that loses a deadlock is run again, whole, and counted once', async () => {
  const site = newSite();
  // The first attempt fails the way a lost deadlock does (SQLSTATE 40P01); a sequence, which a rollback
  // does not undo, lets the second attempt through.
  const name = `th_test_deadlock_${randomUUID().slice(0, 8)}`;
  await h.pool.query(`CREATE SEQUENCE ${name}`);
  await h.pool.query(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       IF nextval('${name}') = 1 THEN RAISE EXCEPTION 'deadlock detected (test)' USING ERRCODE = '40P01'; END IF;
       RETURN NEW; END $$`,
  );
  await h.pool.query(`CREATE TRIGGER ${name} BEFORE INSERT ON request_events FOR EACH ROW WHEN (NEW.site = '${site}') EXECUTE FUNCTION ${name}()`);
  try {
    const now = Date.now();
    const batch = Array.from({ length: 50 }, (_, i) => ({ eventId: `d${i}`, ts: now - i * 1000, site, status: 200, latencyMs: 20 }));
    expect(await createIngester(h.pool).ingest(batch)).toMatchObject({ accepted: 50, inserted: 50, duplicates: 0 });
    const { rows } = await h.pool.query<{ raw: string; rolled: string; attempts: string }>(
      `SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw,
              (SELECT sum(requests) FROM rollup_minute WHERE site = $1 AND route_key = '*') AS rolled,
              (SELECT last_value FROM ${name}) AS attempts`,
      [site],
    );
    // 1 failed row on the first attempt + 50 rows on the second.
    expect(rows[0]).toEqual({ raw: '50', rolled: '50', attempts: '51' });
  } finally {
    await h.pool.query(`DROP TRIGGER ${name} ON request_events`);
    await h.pool.query(`DROP FUNCTION ${name}()`);
    await h.pool.query(`DROP SEQUENCE ${name}`);
  }
});

test('invalid events are reported with line and field while the valid ones land', async () => {
  const site = newSite();
  const ingester = createIngester(h.pool);
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
  const ingester = createIngester(h.pool);
  // Far in the past, so other test files' data (around now) is never in range.
  const base = Date.UTC(2001, 2, 1);
  await ingester.ingest([0, 1, 5, 9].map((d) => ({ ts: base + d * DAY + HOUR, site, status: 200, latencyMs: 10 })));
  const now = new Date(base + 10 * DAY);
  const policy = retentionPolicySchema.parse({ rawDays: 3, minuteDays: 3 });
  const before = (await listPartitions(h.pool, 'request_events')).filter((p) => p.start.getUTCFullYear() === 2001).map((p) => p.name);
  expect(before).toEqual(['request_events_p20010301', 'request_events_p20010302', 'request_events_p20010306', 'request_events_p20010310']);
  const dryRun = await applyRetention(h.pool, policy, now, true);
  expect(dryRun.request_events).toEqual(['request_events_p20010301', 'request_events_p20010302', 'request_events_p20010306']);
  expect((await listPartitions(h.pool, 'request_events')).filter((p) => p.start.getUTCFullYear() === 2001)).toHaveLength(4);
  const dropped = await applyRetention(h.pool, policy, now);
  expect(dropped.request_events).toEqual(dryRun.request_events);
  expect(dropped.rollup_minute).toEqual(['rollup_minute_p20010301', 'rollup_minute_p20010302', 'rollup_minute_p20010306']);
  // Hour and day rollups are kept far longer: the baseline still has the older days.
  expect(dropped.rollup_hour).toEqual([]);
  const { rows } = await h.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [site]);
  expect(Number(rows[0]!.n)).toBe(1);
  const { rows: days } = await h.pool.query<{ n: string }>("SELECT sum(requests) AS n FROM rollup_day WHERE site = $1 AND route_key = '*'", [site]);
  expect(Number(days[0]!.n)).toBe(4);
});

test('the embedded server runs with the write-heavy settings the store is tuned for', async () => {
  for (const [name, value] of Object.entries(EMBEDDED_POSTGRES_SETTINGS)) {
    const { rows } = await h.pool.query<{ setting: string }>(`SELECT current_setting($1) AS setting`, [name]);
    expect(`${name}=${rows[0]!.setting}`).toBe(`${name}=${value}`);
  }
});
