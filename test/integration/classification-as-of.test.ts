/**
 * Classification relative to the event's own day, on the real PostgreSQL: an event of UTC day
 * D is judged against the size and records norms of D−14 … D−1, whatever the order and grouping in which
 * the traffic is stored. The `soft-blocks` scenario (14 quiet days, then an incident day where 65 % of
 * the answers become tiny 200 shells or empty listings) is ingested twice under two site names: once as
 * a backfill in one `target-health ingest` call, once day by day as a live feed would store it. Both must
 * classify the same events the same way, and see the incident's soft blocks.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createPool, type Pool } from '../../server/db/pool';
import { createIngester } from '../../server/db/signal-store/ingest';
import { siteHealthConfigSchema } from '../../core/control/config';
import { replaySite } from '../../tools/replay/engine';
import { generateLabelledScenario } from '../../core/scenarios';
import type { Outcome } from '@target-health/crawler/events/event';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env } from '../kit/services';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const DAYS = 15;
/** Batches of the day-by-day feed (a recorder writes 2,000 at a time; larger keeps the test short). */
const FEED_BATCH = 5_000;

let pool: Pool;
beforeAll(() => {
  pool = createPool(env('DATABASE_URL'), 4);
});
afterAll(async () => pool.end());

const epochMs = (ts: number | string): number => (typeof ts === 'number' ? ts : Date.parse(ts));

async function outcomes(site: string): Promise<Map<string, { outcome: Outcome; day: string }>> {
  const { rows } = await pool.query<{ event_id: string; outcome: Outcome; day: string }>(
    "SELECT event_id, outcome, to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM request_events WHERE site = $1",
    [site],
  );
  return new Map(rows.map((r) => [r.event_id, { outcome: r.outcome, day: r.day }]));
}

test(
  'soft-blocks: a 15-day backfill in one ingest call and ' + 'a day-by-day feed classify alike, and see the incident',
  async () => {
    const run8 = randomUUID().slice(0, 8);
    const backfillSite = `soft-backfill-${run8}.sim.example`;
    const feedSite = `soft-feed-${run8}.sim.example`;
    const end = Math.floor(Date.now() / HOUR) * HOUR;

    // (a) The whole scenario in one `target-health ingest` call (worker threads, batches across days).
    const backfill = generateLabelledScenario('soft-blocks', { site: backfillSite, days: DAYS, end });
    const file = join(env('TH_TEST_DIR'), `${backfillSite}.ndjson`);
    const out = createWriteStream(file);
    const intended = new Map<string, Outcome>();
    const incidentFrom = Date.parse(backfill.truth.incident.from);
    let buffer = '';
    for (const { event, intended: outcome } of backfill.events) {
      if (epochMs(event.ts) >= incidentFrom) intended.set(event.eventId!, outcome);
      buffer += `${JSON.stringify(event)}\n`;
      if (buffer.length > 1 << 20) {
        const room = out.write(buffer);
        buffer = '';
        if (!room) await once(out, 'drain');
      }
    }
    out.end(buffer);
    await once(out, 'finish');
    const loaded = await run(CLI, ['ingest', file, '--json'], cleanEnv({ DATABASE_URL: env('DATABASE_URL') }));
    expect(loaded.stderr).toBe('');
    expect(loaded.code).toBe(0);

    // (b) The same traffic day by day, each day stored after the one before, in batches of one day each.
    const ingester = createIngester(pool);
    const feed = generateLabelledScenario('soft-blocks', { site: feedSite, days: DAYS, end });
    let batch: unknown[] = [];
    let batchDay = NaN;
    for (const { event } of feed.events) {
      const day = Math.floor(epochMs(event.ts) / DAY);
      if (batch.length >= FEED_BATCH || (batch.length > 0 && day !== batchDay)) {
        const stored = await ingester.ingest(batch);
        expect(stored.rejected).toEqual([]);
        batch = [];
      }
      batchDay = day;
      batch.push(event);
    }
    expect((await ingester.ingest(batch)).rejected).toEqual([]);

    const [a, b] = await Promise.all([outcomes(backfillSite), outcomes(feedSite)]);
    expect(a.size).toBe(b.size);
    expect(a.size).toBeGreaterThan(150_000);
    let same = 0;
    const differences = new Map<string, number>();
    for (const [id, { outcome, day }] of a) {
      const other = b.get(id)?.outcome;
      if (other === outcome) same += 1;
      // Where they differ, by day: a backfill's first days may be classified before another worker thread
      // stored the day before them (docs/classification.md).
      else
        differences.set(`${day}: ${outcome} vs ${other}`, (differences.get(`${day}: ${outcome} vs ${other}`) ?? 0) + 1);
    }
    const agreement = same / a.size;
    process.stderr.write(
      `[as-of] ${a.size} events, agreement ${(agreement * 100).toFixed(3)} %, differences ` +
        `${JSON.stringify([...differences])}\n`,
    );
    expect(agreement).toBeGreaterThanOrEqual(0.99);

    // The incident's soft blocks are soft blocks, in both (before judgement 2: 0 % in the backfill).
    const soft = [...intended].filter(([, outcome]) => outcome === 'soft_block').map(([id]) => id);
    expect(soft.length).toBeGreaterThan(10_000);
    for (const [name, stored] of [
      ['backfill', a],
      ['feed', b],
    ] as const) {
      const seen = soft.filter((id) => stored.get(id)?.outcome === 'soft_block').length / soft.length;
      process.stderr.write(
        `[as-of] ${name}: ${(seen * 100).toFixed(2)} % of the incident's ${soft.length} soft blocks classified ` +
          `soft_block\n`,
      );
      expect(seen).toBeGreaterThanOrEqual(0.9);
    }

    // The same judgement: the incident day replayed over both stores gives the same scorecard —
    // first degrade, first pause, and the band and reasons at (almost) every tick.
    const config = siteHealthConfigSchema().parse({ site: backfillSite });
    const from = new Date(Math.floor(incidentFrom / HOUR) * HOUR);
    const [x, y] = await Promise.all(
      [backfillSite, feedSite].map((site) =>
        replaySite(pool, { site, from, to: new Date(end), tickMs: 60_000, config: { ...config, site } }),
      ),
    );
    expect(x!.ticks.length).toBe(y!.ticks.length);
    const pick = (r: typeof x) => ({
      firstDegradeAt: r!.summary.firstDegradeAt,
      firstPauseAt: r!.summary.firstPauseAt,
    });
    expect(pick(x)).toEqual(pick(y));
    expect(x!.summary.firstPauseAt).not.toBeNull();
    // The band tick by tick and every notice. Scores may differ by a point: the 0.02 % of events classified
    // differently sit in the baseline (a soft-block rate a hair apart), and a parser or cost reason at its
    // threshold may flicker (~1 % of ticks here).
    const alike = x!.ticks.filter((t, i) => t.band === y!.ticks[i]!.band).length / x!.ticks.length;
    const sameScore = x!.ticks.filter((t, i) => t.score === y!.ticks[i]!.score).length / x!.ticks.length;
    const sameReasons =
      x!.ticks.filter((t, i) => t.reasons.join() === y!.ticks[i]!.reasons.join()).length / x!.ticks.length;
    const apart = Math.max(...x!.ticks.map((t, i) => Math.abs((t.score ?? 0) - (y!.ticks[i]!.score ?? 0))));
    const notices = (r: typeof x) => r!.ticks.flatMap((t) => t.notices.map((n) => `${t.asOf} ${n.kind}`));
    expect(notices(x)).toEqual(notices(y));
    expect(apart).toBeLessThanOrEqual(2);
    process.stderr.write(
      `[as-of] replayed ${x!.ticks.length} ticks: first degrade ${x!.summary.firstDegradeAt}, first pause ` +
        `${x!.summary.firstPauseAt} in both; ` +
        (`bands alike on ${(alike * 100).toFixed(2)} % of ticks, scores on ${(sameScore * 100).toFixed(2)} % (at ` +
          `most ${apart} apart), reasons on ${(sameReasons * 100).toFixed(2)} %\n`),
    );
    expect(alike).toBeGreaterThanOrEqual(0.99);
    // A hang guard, not a race: the work is fixed (2 × 178k events ingested, one replay): 50–120 s on a
    // quiet machine, 245 s at a load of 20 on two cores (the suite beside a benchmark and four builds).
  },
  600_000,
);

test("one batch spanning days: day D is judged against the batch's earlier days, never against itself", async () => {
  const site = `asof-${randomUUID().slice(0, 8)}.example.com`;
  const ingester = createIngester(pool);
  // "Today" is the last whole UTC day, not the current one: at 00:30 UTC the current day's 01:00 is still
  // in the future, and the store refuses events more than 5 minutes ahead (a run just after midnight failed).
  const today = Math.floor(Date.now() / DAY) * DAY - DAY;
  const normal = (ts: number, i: number) => ({
    eventId: `n${ts}-${i}`,
    ts,
    site,
    pageType: 'product',
    status: 200,
    latencyMs: 90,
    bytes: 50_000 + i * 10,
    extraction: { result: 'ok', validRecords: 3 },
  });
  const tiny = (eventId: string, ts: number) => ({
    eventId,
    ts,
    site,
    pageType: 'product',
    status: 200,
    latencyMs: 40,
    bytes: 900,
    extraction: { result: 'empty' },
  });
  // Listed newest first: the batch's order must not matter, only the days.
  const result = await ingester.ingest([
    tiny('today-tiny', today + HOUR),
    ...Array.from({ length: 40 }, (_, i) => normal(today + HOUR + 1 + i, i)),
    tiny('yesterday-tiny', today - DAY + 2 * HOUR),
    ...Array.from({ length: 40 }, (_, i) => normal(today - DAY + HOUR + i, i)),
    tiny('first-day-tiny', today - 2 * DAY + 2 * HOUR),
  ]);
  expect(result.rejected).toEqual([]);
  const { rows } = await pool.query<{ event_id: string; outcome: string; rule: string }>(
    "SELECT event_id, outcome, rule FROM request_events WHERE site = $1 AND event_id LIKE '%-tiny' ORDER BY event_id",
    [site],
  );
  expect(rows).toEqual([
    // The site's first day: nothing before it, judged on status and content only.
    { event_id: 'first-day-tiny', outcome: 'ok', rule: 'status' },
    // Today: yesterday's 40 pages are the norm (in the same batch, not stored yet); today's own are not.
    { event_id: 'today-tiny', outcome: 'soft_block', rule: 'size_norm' },
    // Yesterday: only the day before it counts, which had one page (too few samples): no verdict by norm.
    { event_id: 'yesterday-tiny', outcome: 'ok', rule: 'status' },
  ]);
});
