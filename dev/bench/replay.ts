/**
 * `npm run bench:replay` — what replaying one site-day costs: 1,440 ticks of 60 s, the default 15-minute
 * window and 14-day baseline, read from the store's rollups (tools/replay/engine.ts), on a scenario's 15 days
 * of traffic (`gradual-hostility`, ingested first through the product's ingest path).
 *
 * Three ways, in the same run, on the same store:
 *   - replay: the engine as `target-health replay` runs it — the period's minute rollups read once and each
 *     tick's current window summed in memory (server/db/signal-store/period-windows.ts), the site's
 *     registration read once, the baseline window and the canary-failed days once per baseline (hourly);
 *   - per-tick reads: the same, but each tick's current window read from PostgreSQL (the engine before);
 *   - baseline: every read repeated on every tick, as the live activity does it.
 * Each is run three times; the median is reported, with the per-tick cost, and the three replays' ticks are
 * compared (they must be identical). Target: ≤ 0.25 s per site-day (what `tune`'s search needs).
 */
import { parseSiteHealthInput } from '../../core/control/config';
import { memoisedReads, replaySite, tickTimes } from '../../tools/replay/engine';
import { generateScenario } from '../../core/scenarios';
import { fmt, heading, ingestInBatches, line, median, seconds, startBenchDb } from './support';
import { canaryFailedDays } from '../../server/db/canaries';
import { findSite } from '../../server/db/sites';
import { readCurrentWindow, readSiteWindows, windowBounds } from '../../server/db/signal-store/read-windows';

const HOUR = 3_600_000;
const RUNS = 3;

async function main(): Promise<void> {
  const db = await startBenchDb();
  try {
    const end = Math.floor(Date.now() / HOUR) * HOUR;
    const scenario = generateScenario('gradual-hostility', { end });
    const { site, incident } = scenario.truth;
    heading(`Replay of one site-day (${site})`);

    let t0 = process.hrtime.bigint();
    const events = await ingestInBatches(db.pool, scenario.events);
    const ingestS = seconds(t0);
    line('events ingested (15 days)', `${fmt(events)} in ${fmt(ingestS, 1)} s (${fmt(events / ingestS)} ev/s)`);

    const parsed = parseSiteHealthInput({ site, tickIntervalMs: 60_000 });
    if (!parsed.ok) throw new Error(parsed.message);
    const { carried: _carried, ...config } = parsed.value;
    const from = new Date(incident.from);
    const to = new Date(incident.to);

    const time = async (
      deps: Parameters<typeof replaySite>[1]['deps'],
    ): Promise<{ s: number; ticks: number; pauses: string | null; answers: string }> => {
      const runs: number[] = [];
      let ticks = 0;
      let pauses: string | null = null;
      let answers = '';
      for (let i = 0; i < RUNS; i++) {
        t0 = process.hrtime.bigint();
        const r = await replaySite(db.pool, { site, from, to, tickMs: 60_000, config, ...(deps ? { deps } : {}) });
        runs.push(seconds(t0));
        ticks = r.ticks.length;
        pauses = r.summary.firstPauseAt;
        answers = JSON.stringify(r.ticks);
      }
      return { s: median(runs), ticks, pauses, answers };
    };
    const replay = await time(undefined);
    const perTick = await time({ readWindows: memoisedReads().readWindows });
    const baseline = await time({
      findSite,
      canaryFailedDays,
      readWindows: (pool, name, spec) => readSiteWindows(pool, name, spec),
    });
    // Where a replayed tick's time goes: the current window's read alone, on the same ticks.
    t0 = process.hrtime.bigint();
    for (const at of tickTimes(from, to, 60_000))
      await readCurrentWindow(db.pool, site, windowBounds({ asOf: at, ...config.window }).current);
    const readsS = seconds(t0);
    line('ticks per site-day', fmt(replay.ticks));
    line(
      'replay (as `target-health replay`): site-day, median of 3',
      `${fmt(replay.s, 2)} s (${fmt((replay.s * 1000) / replay.ticks, 2)} ms per tick)`,
    );
    line(
      'baseline (every read on every tick, as live): site-day',
      `${fmt(baseline.s, 2)} s (${fmt((baseline.s * 1000) / baseline.ticks, 2)} ms per tick)`,
    );
    line(
      'per-tick reads (each current window from PostgreSQL)',
      `${fmt(perTick.s, 2)} s (${fmt((perTick.s * 1000) / perTick.ticks, 2)} ms per tick)`,
    );
    line('ratio baseline / replay', `${fmt(baseline.s / replay.s, 2)}×`);
    line('ratio per-tick reads / replay', `${fmt(perTick.s / replay.s, 2)}×`);
    const same = replay.answers === perTick.answers && replay.answers === baseline.answers;
    line('the three replays tick for tick', same ? 'identical' : 'DIFFERENT');
    if (!same) process.exitCode = 1;
    line(
      "a current window's statement (what per-tick reads pay on each tick)",
      `${fmt((readsS * 1000) / replay.ticks, 2)} ms`,
    );
    line(
      'target: ≤ 0.25 s per site-day',
      replay.s <= 0.25 ? `met (${fmt(replay.s, 2)} s)` : `MISSED (${fmt(replay.s, 2)} s)`,
    );
    line('first pause in the replayed day (a sanity check)', replay.pauses ?? 'none');
  } finally {
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
