/**
 * `npm run bench:backtest` — the whole scenario set (core/scenarios/catalog.ts, default options: 15 days,
 * seed 1, the incident day ending at today's UTC midnight) generated into a temporary directory by
 * `target-health simulate all --out`, then backtested as `target-health backtest <dir>` does it, on a
 * private embedded PostgreSQL: ingest through the product's ingest path into scratch databases, replay
 * of each incident day at 60 s ticks, reference rules, scorecard. Prints the time of each step per
 * scenario and the scorecard. Scenarios are replayed two at a time beside the next ingest, so the
 * per-scenario replay times overlap; the total is wall time.
 *
 * Target: the backtest of the whole set in ≤ 2 minutes, ingest included (generation is
 * timed apart: it stands for the crawler's logs, which a real backtest already has).
 *
 * Options: --keep-dir (leave the generated directory), --json (the scorecard as JSON after the timings).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatScorecardJson, formatScorecardText } from '../../tools/backtest/format';
import { startPrivateBacktestServer } from '../../tools/backtest/private-server';
import { runBacktest } from '../../tools/backtest/run';
import { replaySite } from '../../tools/replay/engine';
import { SCENARIO_NAMES } from '../../core/scenarios';
import { fmt, heading, line } from './support';

const DAY_MS = 86_400_000;
const CLI = join(__dirname, '..', '..', '..', 'client', 'bin', 'target-health.js');
const TARGET_S = 120;

/** `target-health simulate all --out <dir> --end <end>`, as a user writes the set; its lines are printed. */
function simulateAll(dir: string, end: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'simulate', 'all', '--out', dir, '--end', new Date(end).toISOString()],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`simulate exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const keepDir = process.argv.includes('--keep-dir');
  const json = process.argv.includes('--json');
  const dir = mkdtempSync(join(tmpdir(), 'th-bench-backtest-'));
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const db = await startPrivateBacktestServer();
  try {
    heading(`Generating the ${SCENARIO_NAMES.length} scenarios into ${dir} (target-health simulate all)`);
    const genStart = Date.now();
    await simulateAll(dir, end);
    const generateS = (Date.now() - genStart) / 1000;

    heading('Backtest (ingest into scratch databases, replay at 60 s ticks, reference rules, scorecard)');
    const result = await runBacktest({ dir, databaseUrl: db.databaseUrl, tickMs: 60_000, replaySite });
    for (const t of result.timings) {
      line(
        t.scenario,
        `ingest ${fmt(t.ingestMs / 1000, 1)} s (${fmt(t.events / (t.ingestMs / 1000))} events/s), replay ` +
          `${fmt(t.replayMs / 1000, 2)} s (${t.ticks} ticks, ${fmt(t.replayMs / Math.max(1, t.ticks), 2)} ` +
          `ms/tick), score ${fmt(t.scoreMs)} ms`,
      );
    }
    const sum = (f: (t: (typeof result.timings)[number]) => number) => result.timings.reduce((n, t) => n + f(t), 0);
    line('ingest, all scenarios', `${fmt(sum((t) => t.ingestMs) / 1000, 1)} s`);
    line('replay, all scenarios', `${fmt(sum((t) => t.replayMs) / 1000, 1)} s`);
    const events = sum((t) => t.events);
    line('events ingested', fmt(events));
    line('generate (simulate all)', `${fmt(generateS, 1)} s`);
    const totalS = result.totalMs / 1000;
    line(
      'backtest total (ingest included, generation not)',
      `${fmt(totalS, 1)} s — target ≤ ${TARGET_S} s: ${totalS <= TARGET_S ? 'met' : 'NOT met'}`,
    );
    line('generate + backtest', `${fmt(generateS + totalS, 1)} s`);
    process.stdout.write(`\n${formatScorecardText(result)}`);
    if (json) process.stdout.write(formatScorecardJson(result));
  } finally {
    await db.stop();
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
