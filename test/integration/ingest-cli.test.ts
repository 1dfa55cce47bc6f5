/**
 * `target-health ingest` as a user runs it, against the real PostgreSQL: rejected lines reported with
 * their number and field while valid lines land, a summary, an exit code that says whether anything
 * was rejected, idempotent re-runs, and --dry-run without a database. Also the recorder → PostgreSQL.
 * Then the reproductions of hostile input: lines that used to wedge or poison a batch, resends that counted
 * twice, memory that grew with line size, outages that exited 2 or hung.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, writeFileSync } from 'node:fs';
import net, { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createIngester } from '../../server/db/signal-store/ingest';
import { createRecorder, type EventSink } from '@target-health/crawler/recorder';
import { postgresSink } from '@target-health/crawler/postgres';
import { startTestDrainer } from '../kit/inbox';
import { CLI, cleanEnv, run } from '../kit/processes';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

// This file adds triggers to the store's tables: it works in a database of its own.
let db: PrivateDatabase;
beforeAll(async () => {
  db = await privateDatabase(env('DATABASE_URL'));
});
afterAll(async () => db.drop());

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
  const first = await run(CLI, ['ingest', file], cleanEnv({ DATABASE_URL: db.url }));
  expect(first.code).toBe(1);
  expect(first.stderr.trim().split('\n')).toEqual([
    'line 3: latencyMs: is required: the request latency in milliseconds, a number ≥ 0 like 412',
    expect.stringMatching(/^line 4: not valid JSON \(.*\); each line must be one JSON object$/),
    'line 6: statusCode: unknown field; did you mean "status"?',
    expect.stringMatching(/^line 6: status: is required unless networkError is set/),
  ]);
  expect(first.stdout).toMatch(/^6 lines: 2 valid, 2 stored, 0 repeats ignored, 3 rejected, 1 blank — /);
  const { rows } = await db.pool.query<{ event_id: string; outcome: string }>(
    'SELECT event_id, outcome FROM request_events WHERE site = $1 ORDER BY event_id',
    [site],
  );
  expect(rows).toEqual([
    { event_id: 'a', outcome: 'ok' },
    { event_id: 'c', outcome: 'hard_block' },
  ]);

  // The same file again: nothing new is stored, and the rollups do not double.
  const again = await run(CLI, ['ingest', file, '--json'], cleanEnv({ DATABASE_URL: db.url }));
  expect(JSON.parse(again.stdout)).toMatchObject({ accepted: 2, inserted: 0, duplicates: 2, rejected: 3 });
  const { rows: rolled } = await db.pool.query<{ n: string }>(
    "SELECT sum(requests) AS n FROM rollup_minute WHERE site = $1 AND route_key = '*'",
    [site],
  );
  expect(Number(rolled[0]!.n)).toBe(2);
});

test('a clean file exits 0; stdin works; --dry-run needs no database', async () => {
  const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
  const lines = Array.from({ length: 50 }, (_, i) =>
    JSON.stringify({ ts: Date.now() - i * 1000, site, status: 200, latencyMs: 10 + i }),
  ).join('\n');
  const stored = await run(CLI, ['ingest', '-'], cleanEnv({ DATABASE_URL: db.url }), lines);
  expect(stored.code).toBe(0);
  expect(stored.stderr).toBe('');
  expect(stored.stdout).toMatch(/^50 lines: 50 valid, 50 stored/);
  const dry = await run(CLI, ['ingest', '-', '--dry-run'], cleanEnv({}), ndjson(site));
  expect(dry.code).toBe(1);
  expect(dry.stdout).toMatch(/2 valid \(dry run: nothing stored\), 3 rejected/);
});

test(
  'many small batches across the worker threads: ' + 'rejections reported in line order, every valid line stored once',
  async () => {
    const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
    const bad = new Set([1, 7, 8, 23, 64, 99, 100, 150]);
    const lines = Array.from({ length: 150 }, (_, i) => {
      const n = i + 1;
      if (n === 64) return '';
      // The bad lines lack latencyMs.
      if (bad.has(n)) return JSON.stringify({ eventId: `e${n}`, ts: Date.now() - n, site, status: 200 });
      return JSON.stringify({ eventId: `e${n}`, ts: Date.now() - n, site, status: 200, latencyMs: n });
    });
    const out = await run(
      CLI,
      ['ingest', '-', '--batch-size', '3', '--json'],
      cleanEnv({ DATABASE_URL: db.url }),
      lines.join('\n'),
    );
    expect(out.code).toBe(1);
    const reported = out.stderr
      .trim()
      .split('\n')
      .map((l) => Number(/^line (\d+): latencyMs: is required/.exec(l)?.[1]));
    expect(reported).toEqual([...bad].filter((n) => n !== 64));
    expect(JSON.parse(out.stdout)).toMatchObject({
      lines: 150,
      accepted: 142,
      inserted: 142,
      duplicates: 0,
      rejected: 7,
      blank: 1,
    });
    const { rows } = await db.pool.query<{ n: string; distinct_ids: string }>(
      'SELECT count(*) AS n, count(DISTINCT event_id) AS distinct_ids FROM request_events WHERE site = $1',
      [site],
    );
    expect(rows[0]).toEqual({ n: '142', distinct_ids: '142' });
  },
);

test(
  'the database refusing a batch: ' + 'one line naming the lines, exit 3, every valid line before them stored',
  async () => {
    const site = `cli-${randomUUID().slice(0, 8)}.example.com`;
    const refused = `refused-${randomUUID().slice(0, 8)}.example.com`;
    // A trigger that fails exactly the rows of one site: the database, not the input, refuses lines 7-8.
    const fn = `th_test_refuse_${randomUUID().slice(0, 8)}`;
    await db.pool.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk quota exceeded ` +
        `(test)'; END $$`,
    );
    await db.pool.query(
      `CREATE TRIGGER ${fn} BEFORE INSERT ON request_events FOR EACH ROW WHEN (NEW.site = '${refused}') EXECUTE ` +
        `FUNCTION ${fn}()`,
    );
    try {
      const now = Date.now();
      const lines = Array.from({ length: 10 }, (_, i) =>
        JSON.stringify({
          eventId: `e${i + 1}`,
          ts: now - i,
          site: i === 6 || i === 7 ? refused : site,
          status: 200,
          latencyMs: 5,
        }),
      );
      const out = await run(
        CLI,
        ['ingest', '-', '--batch-size', '2'],
        cleanEnv({ DATABASE_URL: db.url }),
        lines.join('\n'),
      );
      expect(out.code).toBe(3);
      expect(out.stderr.trim()).toMatch(
        joinRegExp(
          /^target-health: database: lines 7–8 could not be stored /,
          /\(.*disk quota exceeded \(test\).*\); every valid line before line 7 is stored/,
        ),
      );
      expect(out.stderr).not.toMatch(/ at |unexpected error/);
      // Lines 1-6 are stored; 9-10 (the batch after the refused one) may be too.
      const { rows } = await db.pool.query<{ event_id: string }>(
        'SELECT event_id FROM request_events WHERE site = $1',
        [site],
      );
      const stored = new Set(rows.map((r) => r.event_id));
      expect(['e1', 'e2', 'e3', 'e4', 'e5', 'e6'].filter((id) => !stored.has(id))).toEqual([]);
      expect([...stored].every((id) => ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e9', 'e10'].includes(id))).toBe(true);
    } finally {
      await db.pool.query(`DROP TRIGGER ${fn} ON request_events`);
      await db.pool.query(`DROP FUNCTION ${fn}()`);
    }
  },
);

test(
  'the recorder library stores through the PostgreSQL sink and the inbox drainer, and a retried batch is not ' +
    'counted twice',
  async () => {
    const site = `rec-${randomUUID().slice(0, 8)}.example.com`;
    const sink = postgresSink(db.pool);
    const drainer = startTestDrainer(db.pool, { pollMs: 200 });
    // The first write to finish succeeds in the database but its answer is "lost" (a timeout): the
    // recorder retries it. Writes run concurrently, so which batch that is (100 or the last 50) varies.
    let lost: number | undefined;
    const lossy: EventSink = {
      write: async (batch) => {
        const result = await sink.write(batch);
        if (lost === undefined) {
          lost = batch.events.length;
          throw new Error('timeout waiting for the answer');
        }
        return result;
      },
    };
    const recorder = createRecorder({ sink: lossy, batchSize: 100 });
    for (let i = 0; i < 250; i++)
      recorder.record({ ts: Date.now() - i, site, status: i % 5 === 0 ? 429 : 200, latencyMs: 30 });
    await recorder.close();
    expect(lost).toBeGreaterThan(0);
    expect(recorder.stats()).toMatchObject({ recorded: 250, stored: 250 - lost!, duplicates: lost, failed: 0 });
    try {
      await drainer.drained();
    } finally {
      await drainer.close();
    }
    // Three batches (100, 100, 50), one inbox row each: the retried one was skipped by its key.
    expect(drainer.results.map((r) => r.inserted + r.duplicates).sort()).toEqual([100, 100, 50].sort());
    const { rows } = await db.pool.query<{ n: string; blocks: string }>(
      "SELECT sum(requests) AS n, sum(hard_blocks) AS blocks FROM rollup_minute WHERE site = $1 AND route_key = '*'",
      [site],
    );
    expect(Number(rows[0]!.n)).toBe(250);
    expect(Number(rows[0]!.blocks)).toBe(50);
  },
);

test('target-health retention: a dry run lists, bad flags are refused by name', async () => {
  const dry = await run(CLI, ['retention', '--dry-run', '--raw-days', '3650'], cleanEnv({ DATABASE_URL: db.url }));
  expect(dry.code).toBe(0);
  expect(dry.stdout).toMatch(/^(nothing to drop|would drop \d+ partitions:)/);
  const bad = await run(CLI, ['retention', '--minute-days', '1'], cleanEnv({ DATABASE_URL: db.url }));
  expect(bad.code).toBe(2);
  expect(bad.stderr.trim()).toBe(
    'target-health: --minute-days: the current window needs at least 2 days of minute rollups',
  );
});

// ---- Hostile and unlucky input --------------------------------------------------------------------

const dbEnv = () => cleanEnv({ DATABASE_URL: db.url });
const newSite = (prefix = 'cli') => `${prefix}-${randomUUID().slice(0, 8)}.example.com`;

async function countStored(site: string): Promise<{ raw: number; rolled: number }> {
  const { rows } = await db.pool.query<{ raw: string; rolled: string | null }>(
    `SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw,
            (SELECT sum(requests) FROM rollup_minute WHERE site = $1 AND route_key = '*') AS rolled`,
    [site],
  );
  return { raw: Number(rows[0]!.raw), rolled: Number(rows[0]!.rolled ?? 0) };
}

/** Runs `sql` to create a trigger function and a trigger on request_events; returns the cleanup. */
async function withTrigger(body: string, when: string): Promise<() => Promise<void>> {
  const fn = `th_test_${randomUUID().slice(0, 8)}`;
  await db.pool.query(
    `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NEW; END $$`,
  );
  await db.pool.query(
    `CREATE TRIGGER ${fn} BEFORE INSERT ON request_events FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${fn}()`,
  );
  return async () => {
    await db.pool.query(`DROP TRIGGER ${fn} ON request_events`);
    await db.pool.query(`DROP FUNCTION ${fn}()`);
  };
}

test(
  '"retries": 2147483648 among 9,999 good lines: the 9,999 are stored, the one is named (it once failed the ' +
    'batch forever)',
  async () => {
    const site = newSite();
    const now = Date.now();
    const lines = Array.from({ length: 10_000 }, (_, i) =>
      JSON.stringify({
        eventId: `r${i}`,
        ts: now - i,
        site,
        status: 200,
        latencyMs: 5,
        retries: i === 4_321 ? 2_147_483_648 : 1,
      }),
    );
    for (let attempt = 0; attempt < 2; attempt++) {
      const out = await run(CLI, ['ingest', '-', '--json'], dbEnv(), lines.join('\n'));
      expect(out.code).toBe(1);
      expect(out.stderr.trim()).toBe(
        'line 4322: retries: must be the number of retries before this outcome, at most 2,147,483,647 (got 2147483648)',
      );
      expect(JSON.parse(out.stdout)).toMatchObject({
        lines: 10_000,
        accepted: 9_999,
        inserted: attempt === 0 ? 9_999 : 0,
        rejected: 1,
      });
    }
    expect(await countStored(site)).toEqual({ raw: 9_999, rolled: 9_999 });
  },
);

test(
  'missingFields: a lone surrogate is refused by name on every send; ' + 'odd but valid names survive the resend path',
  async () => {
    const site = newSite();
    const ts = Date.now();
    const lines = [
      JSON.stringify({
        eventId: 'lone',
        ts,
        site,
        status: 200,
        latencyMs: 5,
        extraction: { result: 'missing_fields', missingFields: ['price\ud83d'] },
      }),
      JSON.stringify({
        eventId: 'odd',
        ts,
        site,
        status: 200,
        latencyMs: 5,
        extraction: { result: 'missing_fields', missingFields: ['😀', 'a"b\\c', '{x,y}', 'NULL'] },
      }),
    ].join('\n');
    for (const attempt of [0, 1]) {
      const out = await run(CLI, ['ingest', '-', '--json'], dbEnv(), lines);
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(
        /^line 1: extraction\.missingFields\[0\]: must be a field name without a lone UTF-16 surrogate/,
      );
      // The second send takes the conflict-aware path (the id is stored): it must take the same text.
      expect(JSON.parse(out.stdout)).toMatchObject(
        attempt === 0 ? { inserted: 1, duplicates: 0 } : { inserted: 0, duplicates: 1 },
      );
    }
    const { rows } = await db.pool.query<{ missing_fields: string[] }>(
      'SELECT missing_fields FROM request_events WHERE site = $1',
      [site],
    );
    expect(rows).toEqual([{ missing_fields: ['😀', 'a"b\\c', '{x,y}', 'NULL'] }]);
  },
);

test(
  '40,000 events without eventId, the run failing partway: sending again from the named line stores each exactly ' +
    'once',
  async () => {
    const site = newSite();
    const now = Date.now();
    // No ids; the event at line 25,001 makes the database fail (not for its data: a broken trigger).
    const lines = Array.from({ length: 40_000 }, (_, i) =>
      JSON.stringify({
        ts: now - 40_000 + i,
        site,
        route: { pool: `p${i % 7}` },
        status: i % 9 === 0 ? 403 : 200,
        latencyMs: i === 25_000 ? 4242.5 : 20,
      }),
    );
    const file = join(env('TH_TEST_DIR'), `${site}.ndjson`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const drop = await withTrigger(
      `RAISE EXCEPTION 'disk quota exceeded (test)';`,
      `NEW.site = '${site}' AND NEW.latency_ms = 4242.5`,
    );
    let failed;
    try {
      failed = await run(CLI, ['ingest', file], dbEnv());
    } finally {
      await drop();
    }
    expect(failed.code).toBe(3);
    const from = Number(
      joinRegExp(
        /send the input again from line (\d+) \(events already stored /,
        /are recognised by eventId, or by content when they have none/,
      ).exec(failed.stderr)?.[1],
    );
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThanOrEqual(25_001);
    const before = await countStored(site);
    expect(before.raw).toBeGreaterThanOrEqual(from - 1);
    expect(before.raw).toBeLessThan(40_000);

    // What the message says: send again from that line (here: the rest of the file on stdin).
    const again = await run(CLI, ['ingest', '-', '--json'], dbEnv(), lines.slice(from - 1).join('\n'));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      accepted: 40_001 - from,
      inserted: 40_000 - before.raw,
      duplicates: before.raw - (from - 1),
    });
    expect(await countStored(site)).toEqual({ raw: 40_000, rolled: 40_000 });
    // And the whole file once more: nothing new.
    const whole = await run(CLI, ['ingest', file, '--json'], dbEnv());
    expect(JSON.parse(whole.stdout)).toMatchObject({ inserted: 0, duplicates: 40_000 });
    expect(await countStored(site)).toEqual({ raw: 40_000, rolled: 40_000 });
  },
);

test(
  'the database refusing one event for its data: the batch is split, every other line stored, that line named ' +
    '(exit 1)',
  async () => {
    const site = newSite();
    const now = Date.now();
    const drop = await withTrigger(
      `RAISE EXCEPTION 'value out of range (test)' USING ERRCODE = '22003';`,
      `NEW.site = '${site}' AND NEW.latency_ms = 777`,
    );
    try {
      const lines = Array.from({ length: 3_000 }, (_, i) =>
        JSON.stringify({
          eventId: `s${i}`,
          ts: now - i,
          site,
          status: 200,
          latencyMs: i === 1_234 || i === 2_999 ? 777 : 5,
        }),
      );
      const out = await run(CLI, ['ingest', '-', '--json'], dbEnv(), lines.join('\n'));
      expect(out.code).toBe(1);
      expect(out.stderr.trim().split('\n')).toEqual(
        [1_235, 3_000].map(
          (n) =>
            `line ${n}: the database refused this event (value out of range (test); SQLSTATE 22003); the other ` +
            `events of its batch are stored`,
        ),
      );
      expect(JSON.parse(out.stdout)).toMatchObject({ lines: 3_000, accepted: 2_998, inserted: 2_998, rejected: 2 });
    } finally {
      await drop();
    }
    expect(await countStored(site)).toEqual({ raw: 2_998, rolled: 2_998 });
  },
);

test('invalid UTF-8 is refused by line instead of stored as U+FFFD', async () => {
  const site = newSite();
  const ts = Date.now();
  const good = (id: string) => Buffer.from(`${JSON.stringify({ eventId: id, ts, site, status: 200, latencyMs: 5 })}\n`);
  const before = Buffer.from(`{"eventId":"bad","ts":${ts},"site":"${site}","status":200,"latencyMs":5,"title":"caf`);
  // "café" written in Latin-1: 0xe9 alone is not UTF-8.
  const bad = Buffer.concat([before, Buffer.from([0xe9]), Buffer.from('"}\n')]);
  const file = join(env('TH_TEST_DIR'), `${site}-latin1.ndjson`);
  writeFileSync(file, Buffer.concat([good('a'), bad, good('b')]));
  const out = await run(CLI, ['ingest', file], dbEnv());
  expect(out.code).toBe(1);
  expect(out.stderr.trim()).toBe(
    `line 2: not valid UTF-8 (bad byte at byte ${before.length} of the line); write the file as UTF-8 — the ` +
      `line was not stored rather than stored with replacement characters`,
  );
  const { rows } = await db.pool.query<{ event_id: string }>(
    'SELECT event_id FROM request_events WHERE site = $1 ORDER BY event_id',
    [site],
  );
  expect(rows.map((r) => r.event_id)).toEqual(['a', 'b']);
});

test(
  'header names like constructor and __proto__ are ordinary; full-width and zero-width host spellings are one ' +
    'site',
  async () => {
    const site = newSite();
    const fullWidth = [...site]
      .map((c) => (c === '.' ? '．' : /[a-z0-9]/.test(c) ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c))
      .join('');
    const ts = Date.now();
    const lines = [
      `{"eventId":"h1","ts":${ts},"site":"${site}","status":403,"latencyMs":5,"headers":{"constructor":"x","__pro` +
        `to__":"y","cf-mitigated":"challenge"}}`,
      JSON.stringify({ eventId: 'h2', ts, site: fullWidth, status: 200, latencyMs: 5 }),
      JSON.stringify({ eventId: 'h3', ts, site: site.replace('.', '\u200b.'), status: 200, latencyMs: 5 }),
      JSON.stringify({ eventId: 'h4', ts, site: `HTTPS://${site.toUpperCase()}\u00ad/p`, status: 200, latencyMs: 5 }),
    ];
    const out = await run(CLI, ['ingest', '-'], dbEnv(), lines.join('\n'));
    expect([out.code, out.stderr]).toEqual([0, '']);
    const { rows } = await db.pool.query<{ event_id: string; site: string; outcome: string }>(
      'SELECT event_id, site, outcome FROM request_events WHERE event_id IN ($1, $2, $3, $4) AND site LIKE $5 ' +
        'ORDER BY event_id',
      ['h1', 'h2', 'h3', 'h4', `${site.split('.')[0]}%`],
    );
    expect(rows).toEqual([
      { event_id: 'h1', site, outcome: 'challenge' },
      { event_id: 'h2', site, outcome: 'ok' },
      { event_id: 'h3', site, outcome: 'ok' },
      { event_id: 'h4', site, outcome: 'ok' },
    ]);
  },
);

test(
  'times outside the horizon are refused by line; ' + 'events over 5,000 days no longer create 5,000 partitions',
  async () => {
    const site = newSite();
    const now = Date.now();
    const DAY = 86_400_000;
    const partitions = async () =>
      Number(
        (
          await db.pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_class WHERE relkind = 'r' AND relname LIKE 'request\\_events\\_p%'",
          )
        ).rows[0]!.n,
      );
    const before = await partitions();
    // Day by day back to 2013 (a minute later, so that line 31 is still inside 30 days when the CLI runs).
    const lines = Array.from({ length: 5_000 }, (_, i) =>
      JSON.stringify({ eventId: `d${i}`, ts: now - i * DAY + 60_000, site, status: 200, latencyMs: 5 }),
    );
    lines.push(JSON.stringify({ eventId: 'future', ts: now + 3_600_000, site, status: 200, latencyMs: 5 }));
    const out = await run(CLI, ['ingest', '-', '--json'], dbEnv(), lines.join('\n'));
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ accepted: 31, rejected: 4_970 });
    const errors = out.stderr.trim().split('\n');
    expect(errors[0]).toMatch(
      /^line 32: ts: is 30\.9 days before now \(.*\); the store takes events of the last 30 days only/,
    );
    expect(errors.at(-1)).toMatch(
      /^line 5001: ts: is 5\d minutes after now .*events more than 5 minutes in the future are refused/,
    );
    expect((await partitions()) - before).toBeLessThanOrEqual(32);
  },
);

test('memory stays bounded: 120 legal lines of 990 KB go through a CLI whose heap is 96 MB', async () => {
  const site = newSite();
  const file = join(env('TH_TEST_DIR'), `${site}-large.ndjson`);
  const out = createWriteStream(file);
  const body = `<html>${'x'.repeat(990_000)}</html>`;
  const now = Date.now();
  for (let i = 0; i < 120; i++) {
    if (
      !out.write(
        `${JSON.stringify({ ts: now - i, site, status: 200, latencyMs: 5, bytes: body.length, bodySample: body })}\n`,
      )
    )
      await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const result = await run(
    CLI,
    ['ingest', file, '--json'],
    cleanEnv({ DATABASE_URL: db.url, NODE_OPTIONS: '--max-old-space-size=96' }),
  );
  expect([result.code, result.stderr]).toEqual([0, '']);
  expect(JSON.parse(result.stdout)).toMatchObject({ lines: 120, inserted: 120, rejected: 0 });
  expect(await countStored(site)).toEqual({ raw: 120, rolled: 120 });
});

test('a database that does not answer: exit 3 with the reason, never a hang and never exit 2', async () => {
  // A server that accepts connections and never says a word (a frozen PostgreSQL looks like this).
  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const port = (silent.address() as { port: number }).port;
  try {
    const out = await run(
      CLI,
      ['ingest', '-', '--timeout', '2s'],
      cleanEnv({ DATABASE_URL: `postgres://u:p@127.0.0.1:${port}/db` }),
      '{}',
    );
    expect(out.code).toBe(3);
    expect(out.stderr.trim()).toMatch(
      joinRegExp(
        /^target-health: database: PostgreSQL at 127\.0\.0\.1:\d+\/db is not answering \(.*\); /,
        /nothing was stored — run the command again when it is back$/,
      ),
    );
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
  // Nothing listening at all: the same.
  const refused = await run(
    CLI,
    ['ingest', '-'],
    cleanEnv({ DATABASE_URL: `postgres://u:p@127.0.0.1:${port}/db` }),
    '{}',
  );
  expect(refused.code).toBe(3);
  expect(refused.stderr).toMatch(/is not answering \(.*ECONNREFUSED/);
  // A wrong database name is a setting: exit 2.
  const wrong = await run(
    CLI,
    ['ingest', '-'],
    cleanEnv({ DATABASE_URL: `${db.url.replace(/\/[^/]*$/, '')}/no_such_db` }),
    '{}',
  );
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toMatch(/^target-health: DATABASE_URL: cannot use PostgreSQL at .*no_such_db/);
});

test(
  'a statement that hangs (a lock, ' + 'a stalled disk) ends the run after --timeout with exit 3 naming the lines',
  async () => {
    const site = newSite();
    const now = Date.now();
    // The site's route is stored before: no batch needs the cardinality lock (cardinality.ts), so the
    // stalled batch holds nobody else up and the failure is exactly its lines.
    await createIngester(db.pool).ingest([{ eventId: 'seed', ts: now, site, status: 200, latencyMs: 5 }]);
    const drop = await withTrigger('PERFORM pg_sleep(30);', `NEW.site = '${site}' AND NEW.latency_ms = 99`);
    try {
      const lines = Array.from({ length: 6 }, (_, i) =>
        JSON.stringify({ eventId: `t${i}`, ts: now - i, site, status: 200, latencyMs: i === 4 ? 99 : 5 }),
      );
      const started = Date.now();
      const out = await run(CLI, ['ingest', '-', '--batch-size', '2', '--timeout', '1s'], dbEnv(), lines.join('\n'));
      expect(out.code).toBe(3);
      expect(out.stderr.trim()).toMatch(
        joinRegExp(
          /^target-health: database: lines 5–6 could not be stored \(canceling statement /,
          /due to statement timeout\); every valid line before line 5 is stored/,
        ),
      );
      expect(Date.now() - started).toBeLessThan(25_000);
    } finally {
      await drop();
    }
    const { rows } = await db.pool.query<{ event_id: string }>(
      'SELECT event_id FROM request_events WHERE site = $1 ORDER BY event_id',
      [site],
    );
    expect(rows.map((r) => r.event_id)).toEqual(expect.arrayContaining(['t0', 't1', 't2', 't3']));
    expect(rows.map((r) => r.event_id)).not.toContain('t4');
  },
);

test(
  'PostgreSQL freezing mid-run: exit 3 within the timeout, then sending again from the named line stores each ' +
    'event once',
  async () => {
    const site = newSite();
    const target = new URL(db.url);
    // A TCP proxy in front of the real server that stops forwarding (both ways) once the CLI has sent
    // 5 MB (a few batches): to the CLI, the server has frozen in the middle of a batch.
    let sent = 0;
    let frozen = false;
    const sockets: Socket[] = [];
    const proxy = createServer((down) => {
      const up = net.connect(Number(target.port), target.hostname);
      sockets.push(down, up);
      down.on('data', (d: Buffer) => {
        sent += d.length;
        if (sent > 5_000_000) frozen = true;
        if (!frozen) up.write(d);
      });
      up.on('data', (d: Buffer) => {
        if (!frozen) down.write(d);
      });
      for (const [a, b] of [
        [down, up],
        [up, down],
      ] as const) {
        a.on('error', () => b.destroy());
        a.on('close', () => b.destroy());
      }
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const proxied = new URL(db.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String((proxy.address() as { port: number }).port);
    const now = Date.now();
    const lines = Array.from({ length: 60_000 }, (_, i) =>
      JSON.stringify({
        ts: now - 60_000 + i,
        site,
        route: { pool: `p${i % 5}` },
        status: 200,
        latencyMs: 10 + (i % 50),
        bytes: 1_000 + i,
      }),
    );
    let out;
    const started = Date.now();
    try {
      out = await run(
        CLI,
        ['ingest', '-', '--timeout', '2s'],
        cleanEnv({ DATABASE_URL: proxied.toString() }),
        lines.join('\n'),
      );
    } finally {
      for (const s of sockets) s.destroy();
      proxy.close();
    }
    expect(frozen).toBe(true);
    expect(out.code).toBe(3);
    expect(Date.now() - started).toBeLessThan(60_000);
    const from = Number(
      joinRegExp(
        /^target-health: database: lines \d+–\d+ could not be stored /,
        /\((?:no answer from the database within 4 s|timeout exceeded when trying to connect)\); every valid /,
        /line before line \d+ is stored, later ones may be in part — send the input again from line (\d+)/,
      ).exec(out.stderr)?.[1],
    );
    expect(from).toBeGreaterThan(0);
    // The frozen server's transactions were rolled back when the proxy dropped them: resending from the
    // named line (to the real server) stores the rest, and nothing twice.
    const again = await run(CLI, ['ingest', '-', '--json'], dbEnv(), lines.slice(from - 1).join('\n'));
    expect(again.code).toBe(0);
    expect(await countStored(site)).toEqual({ raw: 60_000, rolled: 60_000 });
  },
);
