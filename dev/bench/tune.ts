/**
 * `npm run bench:tune` — what `target-health tune` costs over 30 days of one busy site: 30 days of `simulate quiet`
 * traffic (about 12,000 events a day, ingested first through the product's ingest path) with two scripted incidents
 * on the last day and the decisions people took on them, as in the acceptance test (test/integration/tune-cli.test.ts):
 * a 4-minute wall of blocks the loop pauses on and a person resumes 20 minutes later into normal traffic (a false
 * pause), and a slow rise of blocks the loop only throttles until a person pauses by hand (a late pause). No loop ever
 * ran, so `tune` first replays the whole 30 days with the product defaults to find the incidents.
 *
 * `tune` runs as the command runs it (client/tune/run.ts `tuneSite`, the guard rail on the generated scenario set
 * included), timed by its phases. Target: ≤ 60 s. Baseline, in the same run: the 30-day record replay with every
 * window read from PostgreSQL per tick (the engine before the period read), against the same replay as `tune` makes it.
 * The load average is printed beside the figures.
 */
import { loadavg } from 'node:os';
import { parseSiteHealthInput } from '../../core/control/config';
import { generateScenario } from '../../core/scenarios';
import { recordDecisionOnce } from '../../server/db/decisions';
import { tuneSite } from '../../client/tune/run';
import { memoisedReads, replaySite } from '../../tools/replay/engine';
import { stretchEvent } from '../../tools/scenarios/stretches';
import { fmt, heading, ingestInBatches, line, seconds, startBenchDb } from './support';

const M = 60_000;
const H = 60 * M;
const DAY = 24 * H;
const TARGET_S = 60;
const SITE = 'bench-tune.sim.example';

async function main(): Promise<void> {
  const db = await startBenchDb();
  try {
    const end = Math.floor(Date.now() / DAY) * DAY;
    const day = end - DAY;
    const blipAt = day + 9 * H;
    const rampAt = day + 14 * H;
    const ramp = (top: number) => (t: number) => top * Math.min(1, (t - rampAt) / (40 * M));
    const stretches = [
      { from: blipAt, to: blipAt + 4 * M, hard: () => 1 },
      {
        from: rampAt,
        to: rampAt + 2 * H,
        hard: ramp(0.25),
        challenge: ramp(0.04),
        slow: (t: number) => 1 + ramp(0.6)(t),
      },
    ];
    heading(`tune over 30 days of one site (${SITE})`);
    // Two 15-day runs of the generator (it makes at most 29 days at once), one after the other.
    const events = function* (): Generator<object> {
      for (const until of [end - 15 * DAY, end])
        for (const e of generateScenario('quiet', { days: 15, end: until, site: SITE }).events)
          yield stretchEvent(e, SITE, stretches).event;
    };
    let t0 = process.hrtime.bigint();
    const ingested = await ingestInBatches(db.pool, events());
    line('events ingested (30 days)', `${fmt(ingested)} in ${fmt(seconds(t0), 1)} s`);
    const decisions = [
      { at: blipAt + 20 * M, kind: 'resume' as const, who: 'alice@example.com', why: 'a blip, gone' },
      { at: rampAt + 90 * M, kind: 'pause' as const, who: 'bob@example.com', why: 'they are blocking us' },
      { at: rampAt + 150 * M, kind: 'resume' as const, who: 'bob@example.com', why: 'over now' },
    ];
    for (const [i, d] of decisions.entries()) {
      const decisionKey = `${SITE}/bench/decision/${i + 1}`;
      await recordDecisionOnce(db.pool, {
        decisionKey,
        site: SITE,
        workflowId: `site-health:${SITE}`,
        chainId: 'bench',
        kind: d.kind,
        who: d.who,
        why: d.why,
        mode: d.kind === 'resume' ? { mode: 'cautious' } : null,
        via: 'signal',
        assessmentKey: null,
        awaitingSince: null,
      });
      await db.pool.query('UPDATE decisions SET decided_at = $2 WHERE decision_key = $1', [
        decisionKey,
        new Date(d.at),
      ]);
    }

    const load = [loadavg()[0]!];
    const phases: { at: number; what: string }[] = [];
    const started = process.hrtime.bigint();
    const say = (what: string): void => {
      phases.push({ at: seconds(started), what });
    };
    const report = await tuneSite(db.pool, {
      site: SITE,
      from: end - 30 * DAY,
      to: end,
      now: Date.now(),
      quietDays: 3,
      running: () => Promise.resolve({ ok: false, reason: 'no loop of this site runs' }),
      say,
    });
    const totalS = seconds(started);
    const rssMb = process.memoryUsage().rss / 2 ** 20;
    load.push(loadavg()[0]!);

    // The baseline: the record's 30-day replay as the engine made it before the period read (each window a
    // statement), against the same replay as tune makes it.
    const parsed = parseSiteHealthInput({ site: SITE, tickIntervalMs: M });
    if (!parsed.ok) throw new Error(parsed.message);
    const { carried: _carried, ...config } = parsed.value;
    const opts = { site: SITE, from: new Date(end - 30 * DAY), to: new Date(end), tickMs: M, config };
    t0 = process.hrtime.bigint();
    const fast = await replaySite(db.pool, opts);
    const fastS = seconds(t0);
    t0 = process.hrtime.bigint();
    const slow = await replaySite(db.pool, { ...opts, deps: { readWindows: memoisedReads().readWindows } });
    const slowS = seconds(t0);
    load.push(loadavg()[0]!);

    const labels = report.incidents.filter((i) => i.label !== null).map((i) => i.label);
    line('labelled incidents', labels.join(', ') || 'none');
    line('verdict', report.verdict.kind);
    if (report.search !== null)
      line('candidates evaluated (rounds)', `${fmt(report.search.evaluations)} (${fmt(report.search.rounds)})`);
    let previous = 0;
    for (const p of phases) {
      line(`  until: ${p.what.slice(0, 52)}`, `${fmt(p.at - previous, 1)} s`);
      previous = p.at;
    }
    line('  the rest (last phase, explanation, report)', `${fmt(totalS - previous, 1)} s`);
    line('tune, 30 days of one site: total', `${fmt(totalS, 1)} s`);
    line('resident memory after tune', `${fmt(rssMb)} MiB`);
    line(`target: ≤ ${TARGET_S} s`, totalS <= TARGET_S ? `met (${fmt(totalS, 1)} s)` : `MISSED (${fmt(totalS, 1)} s)`);
    line('the 30-day record replay, as tune makes it', `${fmt(fastS, 1)} s (${fmt((fastS * 1000) / 30, 0)} ms/day)`);
    line('the same, every window a statement (baseline)', `${fmt(slowS, 1)} s (${fmt((slowS * 1000) / 30, 0)} ms/day)`);
    line('ratio baseline / as tune makes it', `${fmt(slowS / fastS, 1)}×`);
    const same = JSON.stringify(fast.ticks) === JSON.stringify(slow.ticks);
    line('the two record replays: ticks', same ? 'identical' : 'DIFFERENT');
    if (!same || report.verdict.kind !== 'propose') process.exitCode = 1;
    line('load average (1 min) before / after tune / after baseline', load.map((x) => fmt(x, 1)).join(' / '));
  } finally {
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
