/**
 * `npm run bench:replay` — what replaying one site-day costs: 1,440 ticks of 60 s, the default 15-minute
 * window and 14-day baseline, read from the store's rollups (tools/replay/engine.ts), on a scenario's 15 days
 * of traffic (`gradual-hostility`, ingested first through the product's ingest path).
 *
 * Four ways, in the same run, on the same store:
 *   - replay: the engine as `target-health replay` runs it — the period's minute rollups read and checked once
 *     (server/db/signal-store/period-rows.ts), each tick's current window a running sum in memory
 *     (period-windows.ts) scored without parsing it again, the site's registration read once, the baselines and
 *     canary-failed days (one per hour of ticks) read ahead side by side;
 *   - windows parsed: the same, but each tick's windows parsed again by the assessment, as a live tick's are;
 *   - per-tick reads: each tick's current window read from PostgreSQL (the engine before the period read);
 *   - as live: every read repeated on every tick, as the live activity does it.
 * Each is run once to warm up — that run's ticks and whole assessments are compared across the four (they must
 * be identical) — then three times; the median is reported, with the per-tick cost. Target: ≤ 0.25 s per
 * site-day (what `tune`'s search needs). The load average is printed beside the figures.
 */
import { loadavg } from 'node:os';
import { parseSiteHealthInput } from '../../core/control/config';
import { memoisedReads, replaySite, tickTimes } from '../../tools/replay/engine';
import { generateScenario } from '../../core/scenarios';
import { fmt, heading, ingestInBatches, line, median, seconds, startBenchDb } from './support';
import { canaryFailedDays } from '../../server/db/canaries';
import { findSite } from '../../server/db/sites';
import { loadPeriodWindows } from '../../server/db/signal-store/period-windows';
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

    const time = async (deps: Parameters<typeof replaySite>[1]['deps']) => {
      const opts = { site, from, to, tickMs: 60_000, config, ...(deps ? { deps } : {}) };
      // The warm-up run gives the answers: every tick and its whole assessment (untimed: JSON costs time).
      const assessed: string[] = [];
      const warm = await replaySite(db.pool, { ...opts, onTick: (_t, d) => assessed.push(JSON.stringify(d.assessed)) });
      const runs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        t0 = process.hrtime.bigint();
        await replaySite(db.pool, opts);
        runs.push(seconds(t0));
      }
      const s = median(runs);
      return {
        s,
        perTick: (s * 1000) / warm.ticks.length,
        ticks: warm.ticks.length,
        pauses: warm.summary.firstPauseAt,
        answers: JSON.stringify(warm.ticks) + assessed.join('\n'),
      };
    };
    const load = [loadavg()[0]!];
    const replay = await time(undefined);
    const parsedAgain = await time({ windowsValidated: false });
    const perTick = await time({ readWindows: memoisedReads().readWindows });
    const baseline = await time({
      findSite,
      canaryFailedDays,
      readWindows: (pool, name, spec) => readSiteWindows(pool, name, spec),
    });
    // Where a replayed tick's time goes: the period read alone, and the current window's statement alone.
    const times = tickTimes(from, to, 60_000);
    const span = (t: Date) => windowBounds({ asOf: t, ...config.window }).current;
    const reads: number[] = [];
    let rows = 0;
    for (let i = 0; i < RUNS; i++) {
      t0 = process.hrtime.bigint();
      rows = (await loadPeriodWindows(db.pool, site, span(times[0]!).from, span(times[times.length - 1]!).to))!.rows;
      reads.push(seconds(t0));
    }
    t0 = process.hrtime.bigint();
    for (const at of times) await readCurrentWindow(db.pool, site, span(at));
    const statementS = seconds(t0);
    load.push(loadavg()[0]!);

    const figure = (r: { s: number; perTick: number }) => `${fmt(r.s, 3)} s (${fmt(r.perTick, 3)} ms per tick)`;
    line('ticks per site-day', fmt(replay.ticks));
    line('replay (as `target-health replay`): site-day, median of 3', figure(replay));
    line('windows parsed on every tick (as a live tick parses them)', figure(parsedAgain));
    line('per-tick reads (each current window from PostgreSQL)', figure(perTick));
    line('as live (every read on every tick): site-day', figure(baseline));
    line('ratio windows parsed / replay', `${fmt(parsedAgain.s / replay.s, 2)}×`);
    line('ratio per-tick reads / replay', `${fmt(perTick.s / replay.s, 2)}×`);
    line('ratio as live / replay', `${fmt(baseline.s / replay.s, 2)}×`);
    const same = [parsedAgain, perTick, baseline].every((r) => r.answers === replay.answers);
    line('the four replays: ticks and whole assessments', same ? 'identical' : 'DIFFERENT');
    if (!same) process.exitCode = 1;
    line('the period read alone (in the replay), median of 3', `${fmt(median(reads) * 1000, 1)} ms, ${fmt(rows)} rows`);
    line(
      "one current window's statement (per-tick reads, each tick)",
      `${fmt((statementS * 1000) / times.length, 2)} ms`,
    );
    line(
      'target: ≤ 0.25 s per site-day',
      replay.s <= 0.25 ? `met (${fmt(replay.s, 3)} s)` : `MISSED (${fmt(replay.s, 3)} s)`,
    );
    line('first pause in the replayed day (a sanity check)', replay.pauses ?? 'none');
    line('load average (1 min) before / after', load.map((x) => fmt(x, 1)).join(' / '));
  } finally {
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
