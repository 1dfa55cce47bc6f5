/**
 * Every tick's smoothed score and scored band are stored with its assessment: a live loop (1 s ticks on the
 * dev server, real PostgreSQL and signal store) runs past the 50 ticks its `history` query keeps, through a
 * degrading wave so the smoothed score moves; each tick the query still has stored the same values, and
 * `history --json` shows them for the older ticks too — while the loop runs and once it is stopped (no
 * Temporal answer needed), and the chart reads them. `explain --at` an old tick shows its own. Rows stored
 * before the scoring step was (copies without `result.scoring`) say so plainly in both commands.
 */
import { randomUUID } from 'node:crypto';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { workflowIdForSite } from '../../core/common/names';
import { historyQuery, stateQuery } from '../../loop/messages';
import { type History, historySchema, type TickRow } from '../../client/on-call/history';
import { type Explained, explainSchema } from '../../client/on-call/explain-at';
import { readScoreTicks } from '../../tools/charts/read-history';
import {
  ingestNow,
  loopInput,
  newSite,
  prepareSite,
  registerSite,
  startHealthySite,
  waitForState,
} from '../kit/control-loop';
import { CLI, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
let site: string;
let handle: WorkflowHandle;
const RUN = `smoothed${randomUUID().slice(0, 6)}`;

interface StoredRow {
  tick: number;
  assessedAt: string;
  smoothedScore: number | null;
  scoredBand: string | null;
}

async function storedRows(of: string): Promise<StoredRow[]> {
  const { rows } = await h.pool.query<{
    tick: string;
    at: string;
    smoothed_score: number | null;
    scored_band: string | null;
  }>(
    `SELECT tick, to_char(assessed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
            smoothed_score, scored_band
       FROM assessments WHERE site = $1 ORDER BY assessed_at`,
    [of],
  );
  return rows.map((r) => ({
    tick: Number(r.tick),
    assessedAt: r.at,
    smoothedScore: r.smoothed_score,
    scoredBand: r.scored_band,
  }));
}

async function cli(args: string[]): Promise<string> {
  const r = await run(CLI, args, cliEnv);
  if (r.code !== 0) throw new Error(`target-health ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** `history --json` over every stored tick of `of` (up to the last stored one, so no tick is on its way). */
async function historyOf(of: string, rows: readonly StoredRow[]): Promise<History> {
  const to = new Date(Date.parse(rows[rows.length - 1]!.assessedAt) + 1).toISOString();
  const from = new Date(Date.parse(rows[0]!.assessedAt) - 1).toISOString();
  return historySchema.parse(JSON.parse(await cli(['history', of, '--from', from, '--to', to, '--json'])));
}

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({ TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'), DATABASE_URL: env('DATABASE_URL') });
  site = await prepareSite(h.pool, RUN);
  await ingestNow(h.pool, site, { ok: 100 });
  handle = (await startHealthySite(h.client, h.taskQueue, loopInput(site))).handle;
}, 120_000);

afterAll(async () => {
  await h.client.workflow
    .getHandle(workflowIdForSite(site))
    .terminate('test over')
    .catch(() => undefined);
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

test("a live loop's stored ticks carry its smoothed scores; history has them past 50 ticks, stopped", async () => {
  // A degrading wave after the healthy start: the smoothed score falls and the band moves with it.
  await ingestNow(h.pool, site, { hard: 60, ok: 40 });
  await waitForState(handle, 'degrading', (s) => s.band === 'degrading');
  // More good traffic later, so the smoothed score moves within the ticks the loop still keeps too.
  const degradedAt = (await handle.query(stateQuery)).tick;
  await waitForState(handle, 'tick 40', (s) => s.tick >= Math.max(40, degradedAt + 5), 120_000);
  await ingestNow(h.pool, site, { ok: 300 });
  // Past the 50 ticks the loop keeps (1 s ticks: a minute or so).
  await waitForState(handle, 'tick 65', (s) => s.tick >= 65, 120_000);
  const state = await handle.query(stateQuery);
  const live = await handle.query(historyQuery);
  expect(live).toHaveLength(50);
  const stored = await storedRows(site);
  const byTick = new Map(stored.map((r) => [r.tick, r]));
  // Every tick the loop still keeps stored exactly what the loop's summary says.
  for (const t of live.filter((x) => x.state !== 'failed')) {
    expect({ tick: t.tick, ...byTick.get(t.tick) }).toMatchObject({
      tick: t.tick,
      smoothedScore: t.smoothedScore,
      scoredBand: t.scoredBand,
    });
  }
  expect(new Set(live.map((t) => t.smoothedScore)).size).toBeGreaterThan(1);
  expect(live.filter((t) => t.state !== 'failed').length).toBeGreaterThan(45);
  // And every older one stored its own too: the wave's fall is there, ticks the query no longer has.
  const older = stored.filter((r) => r.tick < live[0]!.tick);
  expect(older.length).toBeGreaterThan(10);
  expect(older.every((r) => r.scoredBand !== null && r.smoothedScore !== null)).toBe(true);
  expect(older.some((r) => r.scoredBand === 'healthy')).toBe(true);
  expect(stored.some((r) => r.scoredBand === 'degrading')).toBe(true);

  const whileRunning = await historyOf(site, stored);
  expect(whileRunning.smoothedScores).toBe('stored with each tick');
  const rowsRunning = whileRunning.rows as TickRow[];
  expect(rowsRunning.map((r) => [r.tick, r.smoothedScore, r.scoredBand])).toEqual(
    stored.map((r) => [r.tick, r.smoothedScore, r.scoredBand]),
  );
  // The loop's own actions come from its query still, for its recent ticks only.
  expect(rowsRunning.filter((r) => r.loopActions !== null).length).toBeLessThanOrEqual(50);
  expect(rowsRunning[0]!.loopActions).toBeNull();
  expect(state.chainId).toBe(rowsRunning[0]!.chainId);

  // Stopped: no running loop to ask, the same smoothed scores from the rows alone.
  const stop = await run(CLI, ['decide', 'stop', site, '--who', 'oncall@example.com', '--why', 'test over'], cliEnv);
  expect(stop.code).toBe(0);
  await eventually(
    async () => ((await handle.describe()).status.name === 'COMPLETED' ? true : undefined),
    'the loop completed',
    30_000,
  );
  const finalRows = await storedRows(site);
  const stopped = await historyOf(site, finalRows);
  expect(stopped.smoothedScores).toBe('stored with each tick');
  expect((stopped.rows as TickRow[]).map((r) => [r.tick, r.smoothedScore, r.scoredBand])).toEqual(
    finalRows.map((r) => [r.tick, r.smoothedScore, r.scoredBand]),
  );
  // The chart's smoothed line reads the same stored values (nothing to recompute for these ticks).
  const chart = await readScoreTicks(h.pool, site, Date.parse(stopped.from), Date.parse(stopped.to), 1_000);
  expect(chart.map((c) => c.smoothed)).toEqual(finalRows.map((r) => r.smoothedScore));
  const text = await cli(['history', site, '--from', stopped.from, '--to', stopped.to]);
  expect(text.trimEnd().split('\n').pop()).toBe('smoothed: stored with each tick');
  const first = older[2]!;
  expect(text).toContain(` ${first.tick} `);

  // explain --at an old tick: its own smoothed score and scored band.
  const x: Explained = explainSchema.parse(
    JSON.parse(await cli(['explain', site, '--at', first.assessedAt, '--json'])),
  );
  expect(x.tick.tick).toBe(first.tick);
  expect(x.scoring).toEqual({ smoothedScore: first.smoothedScore, scoredBand: first.scoredBand });
  expect(await cli(['explain', site, '--at', first.assessedAt])).toMatch(
    new RegExp(`^smoothed {3}${first.smoothedScore}, scored band ${first.scoredBand} `, 'm'),
  );
}, 240_000);

test('ticks stored before the scoring step was: no smoothed score, said plainly', async () => {
  // Copies of a few rows without `result.scoring`, as the release before stored them, under a site of their own.
  const old = newSite(`${RUN}-old`);
  await registerSite(h.pool, old);
  const source = await eventually(
    async () => ((await storedRows(site)).length >= 5 ? site : undefined),
    'five stored ticks',
    60_000,
  );
  await h.pool.query(
    `INSERT INTO assessments (assessment_key, site, workflow_id, chain_id, tick, assessed_at, result)
     SELECT $2 || '/old/' || tick, $2, 'site-health:' || $2, 'old', tick, assessed_at, result - 'scoring'
       FROM assessments WHERE site = $1 ORDER BY assessed_at LIMIT 5`,
    [source, old],
  );
  const rows = await storedRows(old);
  expect(rows.map((r) => [r.smoothedScore, r.scoredBand])).toEqual(Array.from({ length: 5 }, () => [null, null]));
  const doc = await historyOf(old, rows);
  expect((doc.rows as TickRow[]).map((r) => [r.smoothedScore, r.scoredBand])).toEqual(
    Array.from({ length: 5 }, () => [null, null]),
  );
  expect(doc.smoothedScores).toBe(
    "not stored with these 5 ticks (stored before the release that stores it); the running loop's recent ticks " +
      'are not available (the site has no running loop)',
  );
  const x = explainSchema.parse(JSON.parse(await cli(['explain', old, '--at', rows[2]!.assessedAt, '--json'])));
  expect(x.scoring).toBeNull();
  expect(await cli(['explain', old, '--at', rows[2]!.assessedAt])).toMatch(
    /^smoothed {3}— \(not stored with this tick: it was stored before the release that stores it\)$/m,
  );
}, 120_000);
