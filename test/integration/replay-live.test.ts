/**
 * Replay is the live loop: a stored trace (shifted to the present: healthy minutes, then a hostile
 * minute that has not ended yet when the loop starts) is judged by the live loop on the dev server,
 * tick by tick, until it pauses the site; then `replaySite` walks the same tick times over the same
 * store and must give the same scores, smoothed scores, bands, reasons and notices at every tick — and the same
 * whole assessment as each live tick stored, its windows summed in memory from the period read.
 * Also: no look-ahead — an event 1 ms after a tick's time never reaches that tick.
 */
import { workflowIdForSite } from '../../core/common/names';
import { parseSiteHealthInput } from '../../core/control/config';
import { historyQuery } from '../../loop/messages';
import type { TickAssessment } from '../../core/control/tick-assessment';
import { storableJson } from '@target-health/crawler/events/well-formed';
import { loadPeriodWindows } from '../../server/db/signal-store/period-windows';
import { replaySite } from '../../tools/replay/engine';
import { ingest, eventsOf } from '../kit/sites-traffic';
import { loopInput, prepareSite, startLoop, waitForState } from '../kit/control-loop';
import { createTestWorker, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function configOf(input: ReturnType<typeof loopInput>) {
  const parsed = parseSiteHealthInput(input);
  if (!parsed.ok) throw new Error(parsed.message);
  const { carried: _carried, ...config } = parsed.value;
  return config;
}

test('a live loop and a replay over the same stored traffic agree tick for tick', async () => {
  const site = await prepareSite(h.pool, 'replay-live');
  const input = loopInput(site, { tickIntervalMs: 2_000 });
  // The worker first (its bundle takes seconds to load on a busy machine), then the trace.
  const { worker, connection } = await createTestWorker(h);
  // The trace: ten healthy minutes, then one hostile minute — the minute under way (or the next one,
  // late in it). All stored before the loop starts, so nothing races the live ticks: a tick judges the
  // whole minutes before its time, so the hostile minute counts from the tick after it has ended, live
  // and in replay alike.
  let hostile = Math.floor(Date.now() / MINUTE) * MINUTE;
  if (Date.now() > hostile + 30_000) hostile += MINUTE;
  await ingest(
    h.pool,
    eventsOf(site, { ok: 20, hard: 100, challenge: 80 }, (i) => hostile + i * 200),
  );
  for (let m = 10; m >= 1; m--) {
    const start = hostile - m * MINUTE;
    await ingest(
      h.pool,
      eventsOf(site, { ok: 30 }, (i) => start + i * 1_000),
    );
  }
  // The loop starts a few healthy ticks before the hostile minute ends (its history then holds every tick).
  const startAt = hostile + MINUTE - 8_000;
  if (Date.now() > startAt)
    throw new Error('storing the trace took over 20 s: the loop could not start before its hostile minute ended');
  await new Promise((resolve) => setTimeout(resolve, startAt - Date.now()));
  const live = await worker.runUntil(async () => {
    const handle = await startLoop(h.client, h.taskQueue, input);
    // Until the hostile minute has passed and the loop paused the site, and two ticks more.
    const paused = await waitForState(handle, 'paused by the loop', (s) => s.awaitingHuman !== null, 150_000);
    await waitForState(handle, 'two ticks after the pause', (s) => s.tick >= paused.tick + 2);
    await handle.terminate('test done');
    return handle.query(historyQuery);
  });
  await connection.close();

  expect(live[0]!.tick).toBe(1); // every tick is still in the kept history
  const notices = await h.pool.query<{ notification_key: string; kind: string }>(
    'SELECT notification_key, kind FROM notifications WHERE site = $1',
    [site],
  );
  const liveNotices = (tick: number): string[] =>
    notices.rows
      .filter((n) => n.notification_key.split('/')[2] === String(tick))
      .map((n) => n.kind)
      .sort();

  const assessed: Array<TickAssessment | null> = [];
  const replay = await replaySite(h.pool, {
    site,
    from: new Date(0),
    to: new Date(0),
    tickMs: input.tickIntervalMs!,
    at: live.map((t) => new Date(t.assessedAt)),
    config: configOf(input),
    onTick: (_t, d) => assessed.push(d.assessed),
  });
  expect(replay.ticks).toHaveLength(live.length);
  const seen = (t: { score: number | null; smoothedScore: number | null; band: string; reasons: string[] }) => ({
    score: t.score,
    smoothedScore: t.smoothedScore,
    band: t.band,
    reasons: t.reasons,
  });
  for (const [i, l] of live.entries()) {
    const r = replay.ticks[i]!;
    expect({ tick: r.tick, asOf: r.asOf, ...seen(r), notices: r.notices.map((n) => n.kind).sort() }).toEqual({
      tick: l.tick,
      asOf: l.assessedAt,
      ...seen(l),
      notices: liveNotices(l.tick),
    });
  }
  // The smoothed score and scored band stored with each live tick are the replay's too.
  const { rows: stored } = await h.pool.query<{ tick: string; smoothed_score: number | null; scored_band: string }>(
    'SELECT tick, smoothed_score, scored_band FROM assessments WHERE site = $1 ORDER BY tick',
    [site],
  );
  const replayed = new Map(replay.ticks.map((r) => [r.tick, [r.smoothedScore, r.scoredBand]]));
  expect(stored.length).toBeGreaterThan(0);
  expect(stored.map((r) => [Number(r.tick), r.smoothed_score, r.scored_band])).toEqual(
    stored.map((r) => [Number(r.tick), ...replayed.get(Number(r.tick))!]),
  );
  // Whole assessments too: each live tick's stored result (windows read by the per-tick statement, parsed) is
  // the replay's (windows from the period read, summed in memory) — windows, scores, route diagnosis, canaries.
  const { rows: results } = await h.pool.query<{ tick: string; result: Record<string, unknown> }>(
    'SELECT tick, result FROM assessments WHERE site = $1 ORDER BY tick',
    [site],
  );
  const byTick = new Map(assessed.map((a) => [a?.tick, a]));
  expect(results.length).toBe(stored.length);
  // The replay did read its windows in memory: the period read accepted the trace.
  const span = replay.ticks.map((t) => Date.parse(t.asOf));
  const period = await loadPeriodWindows(h.pool, site, new Date(span[0]! - HOUR), new Date(span[span.length - 1]!));
  expect(period?.rows).toBeGreaterThan(10);
  for (const { tick, result } of results) {
    const mine = byTick.get(Number(tick));
    expect(result.assessment).toEqual(expect.objectContaining({ state: expect.any(String) }));
    const { window, assessment, crawlerCanaries } = JSON.parse(storableJson(mine)) as Record<string, unknown>;
    expect({ tick, window, assessment, crawlerCanaries }).toEqual({
      tick,
      window: result.window,
      assessment: result.assessment,
      crawlerCanaries: result.crawlerCanaries,
    });
  }
  // The trace did go somewhere: healthy first, paused at the end, notices sent.
  expect(live[0]!.band).toBe('healthy');
  expect(live[live.length - 1]!.band).toBe('resisting');
  expect(notices.rows.length).toBeGreaterThan(0);
  expect(workflowIdForSite(site)).toContain(site);
}, 240_000);

test(
  'no look-ahead: an event 1 ms after a tick never reaches it, ' + 'nor one in the minute the tick falls in',
  async () => {
    const site = await prepareSite(h.pool, 'lookahead');
    const boundary = Math.floor(Date.now() / MINUTE) * MINUTE - 3 * MINUTE;
    await ingest(h.pool, [
      ...eventsOf(site, { ok: 1 }, () => boundary - 1),
      ...eventsOf(site, { hard: 1 }, () => boundary + 1),
      ...eventsOf(site, { hard: 1 }, () => boundary + 29_999),
    ]);
    const config = configOf(loopInput(site));
    const at = [new Date(boundary), new Date(boundary + 1), new Date(boundary + 30_000), new Date(boundary + MINUTE)];
    const r = await replaySite(h.pool, { site, from: new Date(0), to: new Date(0), tickMs: 1_000, at, config });
    // At the boundary, 1 ms and 30 s after it: only the event before it. A minute later: all three.
    expect(r.ticks.map((t) => t.requests)).toEqual([1, 1, 1, 3]);
  },
);
