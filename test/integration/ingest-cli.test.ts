/**
 * `target-health ingest` as a user runs it, against the real PostgreSQL: rejected lines reported with
 * their number and field while valid lines land, a summary, an exit code that says whether anything
 * was rejected, idempotent re-runs, and --dry-run without a database. Also the recorder → PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRecorder, postgresSink, type EventSink } from '../../recorder';
import { CLI, cleanEnv, run } from '../helpers/processes';
import { env, openHarness, type TestHarness } from '../helpers/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

function ndjson(site: string): string {
  const ts = new Date().toISOString();
  return [
    JSON.stringify({ eventId: 'a', ts, site, status: 200, latencyMs: 120 }),
    '',
    JSON.stringify({ eventId: 'b', ts, site, status: 200 }),
    '{"ts": oops',
    JSON.stringify({ eventId: 'c', ts, site, status: 403, latencyMs: 90 }),
    JSON.stringify({ eventId: 'd', ts, site, statusCode: 200, latencyMs: 1 }),
    '',
  ].join('\n');
}

test('valid lines land, invalid ones are reported by line and field, exit code 1', async () => {
  const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
  const file = join(env('TH_TEST_DIR'), `${site}.ndjson`);
  writeFileSync(file, ndjson(site));
  const first = await run(CLI, ['ingest', file], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
  expect(first.code).toBe(1);
  expect(first.stderr.trim().split('\n')).toEqual([
    'line 3: latencyMs: is required: the request latency in milliseconds, a number ≥ 0 like 412',
    expect.stringMatching(/^line 4: not valid JSON \(.*\); each line must be one JSON object$/),
    'line 6: statusCode: unknown field; did you mean "status"?',
    expect.stringMatching(/^line 6: status: is required unless networkError is set/),
  ]);
  expect(first.stdout).toMatch(/^6 lines: 2 valid, 2 stored, 0 repeats ignored, 3 rejected, 1 blank — /);
  const { rows } = await h.pool.query<{ event_id: string; outcome: string }>('SELECT event_id, outcome FROM request_events WHERE site = $1 ORDER BY event_id', [site]);
  expect(rows).toEqual([
    { event_id: 'a', outcome: 'ok' },
    { event_id: 'c', outcome: 'hard_block' },
  ]);

  // The same file again: nothing new is stored, and the rollups do not double.
  const again = await run(CLI, ['ingest', file, '--json'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
  expect(JSON.parse(again.stdout)).toMatchObject({ accepted: 2, inserted: 0, duplicates: 2, rejected: 3 });
  const { rows: rolled } = await h.pool.query<{ n: string }>("SELECT sum(requests) AS n FROM rollup_minute WHERE site = $1 AND route_key = '*'", [site]);
  expect(Number(rolled[0]!.n)).toBe(2);
});

test('a clean file exits 0; stdin works; --dry-run needs no database', async () => {
  const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ ts: Date.now() - i * 1000, site, status: 200, latencyMs: 10 + i })).join('\n');
  const stored = await run(CLI, ['ingest', '-'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }), lines);
  expect(stored.code).toBe(0);
  expect(stored.stderr).toBe('');
  expect(stored.stdout).toMatch(/^50 lines: 50 valid, 50 stored/);
  const dry = await run(CLI, ['ingest', '-', '--dry-run'], cleanEnv({}), ndjson(site));
  expect(dry.code).toBe(1);
  expect(dry.stdout).toMatch(/2 valid \(dry run: nothing stored\), 3 rejected/);
});

test('many small batches across the worker threads: rejections reported in line order, every valid line stored once', async () => {
  const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
  const bad = new Set([1, 7, 8, 23, 64, 99, 100, 150]);
  const lines = Array.from({ length: 150 }, (_, i) => {
    const n = i + 1;
    if (n === 64) return '';
    if (bad.has(n)) return JSON.stringify({ eventId: `e${n}`, ts: Date.now() - n, site, status: 200 }); // no latencyMs
    return JSON.stringify({ eventId: `e${n}`, ts: Date.now() - n, site, status: 200, latencyMs: n });
  });
  const out = await run(CLI, ['ingest', '-', '--batch-size', '3', '--json'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }), lines.join('\n'));
  expect(out.code).toBe(1);
  const reported = out.stderr.trim().split('\n').map((l) => Number(/^line (\d+): latencyMs: is required/.exec(l)?.[1]));
  expect(reported).toEqual([...bad].filter((n) => n !== 64));
  expect(JSON.parse(out.stdout)).toMatchObject({ lines: 150, accepted: 142, inserted: 142, duplicates: 0, rejected: 7, blank: 1 });
  const { rows } = await h.pool.query<{ n: string; distinct_ids: string }>('SELECT count(*) AS n, count(DISTINCT event_id) AS distinct_ids FROM request_events WHERE site = $1', [site]);
  expect(rows[0]).toEqual({ n: '142', distinct_ids: '142' });
});

test('the database refusing a batch: one line naming the lines, exit 3, every valid line before them stored', async () => {
  const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
  const refused = `refused-${randomUUID().slice(0, 8)}.example.com`;
  // A trigger that fails exactly the rows of one site: the database, not the input, refuses lines 7-8.
  const fn = `th_test_refuse_${randomUUID().slice(0, 8)}`;
  await h.pool.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk quota exceeded (test)'; END $$`);
  await h.pool.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON request_events FOR EACH ROW WHEN (NEW.site = '${refused}') EXECUTE FUNCTION ${fn}()`);
  try {
    const now = Date.now();
    const lines = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({ eventId: `e${i + 1}`, ts: now - i, site: i === 6 || i === 7 ? refused : site, status: 200, latencyMs: 5 }),
    );
    const out = await run(CLI, ['ingest', '-', '--batch-size', '2'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }), lines.join('\n'));
    expect(out.code).toBe(3);
    expect(out.stderr.trim()).toMatch(/^target-health: database: lines 7–8 could not be stored \(.*disk quota exceeded \(test\).*\); every valid line before line 7 is stored/);
    expect(out.stderr).not.toMatch(/ at |unexpected error/);
    // Lines 1-6 are stored; 9-10 (the batch after the refused one) may be too.
    const { rows } = await h.pool.query<{ event_id: string }>('SELECT event_id FROM request_events WHERE site = $1', [site]);
    const stored = new Set(rows.map((r) => r.event_id));
    expect(['e1', 'e2', 'e3', 'e4', 'e5', 'e6'].filter((id) => !stored.has(id))).toEqual([]);
    expect([...stored].every((id) => ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e9', 'e10'].includes(id))).toBe(true);
  } finally {
    await h.pool.query(`DROP TRIGGER ${fn} ON request_events`);
    await h.pool.query(`DROP FUNCTION ${fn}()`);
  }
});

test('the recorder library stores through the PostgreSQL sink, and a retried batch is not counted twice', async () => {
  const site = `rec-${randomUUID().slice(0, 8)}.example.com`;
  const sink = postgresSink(h.pool);
  // The first write to finish succeeds in the database but its answer is "lost" (a timeout): the
  // recorder retries it. Writes run concurrently, so which batch that is (100 or the last 50) varies.
  let lost: number | undefined;
  const lossy: EventSink = { write: async (batch) => {
    const result = await sink.write(batch);
    if (lost === undefined) {
      lost = batch.events.length;
      throw new Error('timeout waiting for the answer');
    }
    return result;
  } };
  const recorder = createRecorder({ sink: lossy, batchSize: 100 });
  for (let i = 0; i < 250; i++) recorder.record({ ts: Date.now() - i, site, status: i % 5 === 0 ? 429 : 200, latencyMs: 30 });
  await recorder.close();
  expect(lost).toBeGreaterThan(0);
  expect(recorder.stats()).toMatchObject({ recorded: 250, stored: 250 - lost!, duplicates: lost, failed: 0 });
  const { rows } = await h.pool.query<{ n: string; blocks: string }>("SELECT sum(requests) AS n, sum(hard_blocks) AS blocks FROM rollup_minute WHERE site = $1 AND route_key = '*'", [site]);
  expect(Number(rows[0]!.n)).toBe(250);
  expect(Number(rows[0]!.blocks)).toBe(50);
});

test('target-health retention: a dry run lists, bad flags are refused by name', async () => {
  const dry = await run(CLI, ['retention', '--dry-run', '--raw-days', '3650'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
  expect(dry.code).toBe(0);
  expect(dry.stdout).toMatch(/^(nothing to drop|would drop \d+ partitions:)/);
  const bad = await run(CLI, ['retention', '--minute-days', '1'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
  expect(bad.code).toBe(2);
  expect(bad.stderr.trim()).toBe('target-health: --minute-days: the current window needs at least 2 days of minute rollups');
});
