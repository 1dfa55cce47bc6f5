/**
 * `target-health export` as a user runs it, against the real PostgreSQL: a site's stored events come out
 * in the event schema, `ingest` takes them back unchanged (every line a repeat), and `--shift` makes a
 * calibration crawl into past days that count as the site's baseline, classified as it was.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEvent } from '@target-health/crawler/events/event';
import { ingestEvents } from '../../server/db/signal-store';
import { CLI, cleanEnv, run } from '../kit/processes';
import { privateDatabase, type PrivateDatabase } from '../kit/private-database';
import { env } from '../kit/services';

let db: PrivateDatabase;
beforeAll(async () => {
  db = await privateDatabase(env('DATABASE_URL'));
});
afterAll(async () => db.drop());

const CHALLENGE =
  '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><div ' +
  'id="challenge-running"></div><script>window._cf_chl_opt={cvId:"3"};</script></body></html>';

/** A calibration crawl of an hour ago: ordinary pages, a challenge (its page classified at ingest), a network error. */
async function calibrationCrawl(site: string): Promise<number> {
  const at = Date.now() - 3_600_000;
  const events = [
    ...Array.from({ length: 40 }, (_, i) => ({
      eventId: `cal-${i}`,
      ts: at + i * 1_000,
      site,
      route: { country: 'DE', pool: 'residential', session: 'sticky' },
      pageType: 'product',
      status: 200,
      latencyMs: 200 + i,
      bytes: 50_000 + i,
      retries: i % 3,
      credits: 1.5,
      extraction: { result: 'ok' as const, validRecords: 3 },
    })),
    {
      eventId: 'cal-missing',
      ts: at + 41_000,
      site,
      pageType: 'product',
      status: 200,
      latencyMs: 210,
      extraction: { result: 'missing_fields' as const, validRecords: 0, missingFields: ['price'] },
    },
    {
      eventId: 'cal-challenge',
      ts: at + 42_000,
      site,
      status: 403,
      latencyMs: 90,
      headers: { server: 'cloudflare', 'cf-mitigated': 'challenge' },
      bodySample: CHALLENGE,
    },
    {
      eventId: 'cal-reset',
      ts: at + 43_000,
      site,
      networkError: 'connection_reset' as const,
      latencyMs: 5_000,
      canary: true,
    },
  ];
  const result = await ingestEvents(db.pool, events);
  expect(result.rejected).toEqual([]);
  return events.length;
}

test(
  'export writes the stored events in the event schema; ingest takes them back as repeats; --shift makes them a ' +
    'baseline, classified as they were',
  async () => {
    const site = `export-${randomUUID().slice(0, 8)}.example.com`;
    const n = await calibrationCrawl(site);
    const dir = env('TH_TEST_DIR');
    const file = join(dir, `${site}.ndjson`);

    const exported = await run(
      CLI,
      ['export', site, '--from', '-2h', '--output', file],
      cleanEnv({ DATABASE_URL: db.url }),
    );
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({
      code: 0,
      stderr: expect.stringContaining(`exported ${n} events of ${site}`),
    });
    expect(readdirSync(dir).filter((f) => f.startsWith(`${site}.ndjson.partial`))).toEqual([]);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(n);
    // Every line is a valid event; the verdict travels with it.
    for (const line of lines) expect(parseEvent(line)).toMatchObject({ ok: true });
    expect(lines[0]).toEqual({
      ts: expect.stringMatching(/Z$/),
      site,
      eventId: 'cal-0',
      route: { country: 'DE', pool: 'residential', session: 'sticky' },
      pageType: 'product',
      status: 200,
      latencyMs: 200,
      bytes: 50_000,
      retries: 0,
      credits: 1.5,
      extraction: { result: 'ok', validRecords: 3 },
      outcome: 'ok',
      outcomeReason: expect.stringMatching(/^exported: /),
    });
    expect(lines.find((l) => l.eventId === 'cal-missing')).toMatchObject({
      extraction: { result: 'missing_fields', validRecords: 0, missingFields: ['price'] },
    });
    expect(lines.find((l) => l.eventId === 'cal-challenge')).toMatchObject({
      status: 403,
      outcome: 'challenge',
      outcomeReason: expect.stringMatching(/^exported: .+/),
    });
    expect(lines.find((l) => l.eventId === 'cal-reset')).toMatchObject({
      networkError: 'connection_reset',
      canary: true,
      outcome: 'hard_block',
    });

    // Back unchanged: every line a repeat.
    const again = await run(CLI, ['ingest', file, '--json'], cleanEnv({ DATABASE_URL: db.url }));
    expect(JSON.parse(again.stdout)).toMatchObject({ accepted: n, inserted: 0, duplicates: n, rejected: 0 });

    // Two and three days back: stored as new events of those days, each with its verdict.
    for (const shift of ['-2d', '-3d']) {
      const shifted = await run(
        CLI,
        ['export', site, '--from', '-2h', '--to', 'now', '--shift', shift],
        cleanEnv({ DATABASE_URL: db.url }),
      );
      expect(shifted.code).toBe(0);
      const ingest = await run(CLI, ['ingest', '-', '--json'], cleanEnv({ DATABASE_URL: db.url }), shifted.stdout);
      expect(JSON.parse(ingest.stdout)).toMatchObject({ accepted: n, inserted: n, rejected: 0 });
    }
    const { rows } = await db.pool.query<{ day: string; n: string; challenges: string; hard: string }>(
      `SELECT (now()::date - ts::date)::text AS day, count(*)::text AS n,
            count(*) FILTER (WHERE outcome = 'challenge')::text AS challenges,
            count(*) FILTER (WHERE outcome = 'hard_block')::text AS hard
       FROM request_events WHERE site = $1 GROUP BY 1 ORDER BY 1`,
      [site],
    );
    // (An hour ago may be yesterday just after midnight: compare by offset from the first day.)
    expect(rows.map((r) => [Number(r.n), Number(r.challenges), Number(r.hard)])).toEqual([
      [n, 1, 1],
      [n, 1, 1],
      [n, 1, 1],
    ]);
    const days = rows.map((r) => Number(r.day));
    expect([days[1]! - days[0]!, days[2]! - days[0]!]).toEqual([2, 3]);
  },
  120_000,
);

test(
  'export refuses a shift that leaves ingest’s horizon, a bad duration or an empty range by name, and writes no ' +
    'file',
  async () => {
    const site = `export-bad-${randomUUID().slice(0, 8)}.example.com`;
    const file = join(env('TH_TEST_DIR'), `${site}.ndjson`);
    const cases: Array<[string[], RegExp]> = [
      [['--shift', '-40d'], /^--shift: -40d moves events of .* outside what ingest takes \(the last 30 days/],
      [['--shift', 'two days'], /^--shift: "two days" is not a duration; use e\.g\. -2d/],
      [['--from', '-1h', '--to', '-2h'], /^--from: .* is not before --to /],
    ];
    for (const [args, message] of cases) {
      const r = await run(CLI, ['export', site, '--output', file, ...args], cleanEnv({ DATABASE_URL: db.url }));
      expect({ code: r.code, stderr: r.stderr.trim().replace(/^target-health: /, '') }).toEqual({
        code: 2,
        stderr: expect.stringMatching(message),
      });
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(existsSync(file)).toBe(false);
  },
);
