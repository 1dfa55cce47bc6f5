/**
 * `target-health ingest` SIGKILLed mid-file, then the file sent again — the recovery the CLI documents.
 *
 * The CLI reads the file from its stdin, written by the test, so the kill lands mid-file by construction:
 * the test writes part of the file, waits until part of it is stored (and, after the first kill, until
 * batches of the next part are being stored), and SIGKILLs the process with the rest of the file unsent.
 * Half of the events have no `eventId`: the store derives one from their content, so a resend stores
 * nothing twice for them either. Afterwards every event of the file is stored exactly once (each event
 * carries its number in `bytes`, checked one by one). CI form: one kill, 12,000 events; full form
 * (TH_FAULTS_FULL=1): three kills, 120,000 events.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { printFigures } from '../kit/fault-checks';
import { IngestRun, countStored, numberedEventLines, storedNumbers } from '../kit/fault-events';
import { FULL, startFaultDatabase, until, type FaultDatabase } from '../kit/fault-stack';
import { CLI, run } from '../kit/processes';

const EVENTS = FULL ? 120_000 : 12_000;
const KILLS = FULL ? 3 : 1;
const BATCH = 1_000;

let db: FaultDatabase;
beforeAll(async () => {
  db = await startFaultDatabase('ingest');
}, 300_000);
afterAll(async () => db?.close(), 120_000);

test('ingest SIGKILLed mid-file and run again: every event of the file stored exactly once', async () => {
  const site = `ingest-kill-${randomUUID().slice(0, 8)}.example.com`;
  const lines = numberedEventLines(site, EVENTS);
  const file = join(db.dir, 'events.ndjson');
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
  const figures: Array<Record<string, string | number>> = [];

  for (let kill = 1; kill <= KILLS; kill++) {
    // Each run starts from the top of the file, as an operator re-running the command would.
    const before = await countStored(db.pool, site);
    const ingest = new IngestRun(db.env(), ['--batch-size', String(BATCH)]);
    // Past what is stored already (all repeats), then two more batches: those are new, so the run is storing.
    // Whole batches only: a partial batch would wait for more input before being sent.
    const upTo = Math.min(EVENTS - BATCH, Math.floor((before + 2 * BATCH + (kill - 1) * BATCH) / BATCH) * BATCH);
    await ingest.write(lines.slice(0, upTo));
    await until(
      async () => {
        if (!ingest.alive) throw new Error(`ingest exited early: ${ingest.output}`);
        return (await countStored(db.pool, site)) > before ? true : undefined;
      },
      'the run to store new events',
      120_000,
    );
    await ingest.kill('SIGKILL');
    const after = await storedNumbers(db.pool, site, EVENTS);
    expect(after.doubled).toEqual([]);
    expect(after.rows).toBeLessThan(EVENTS);
    figures.push({
      run: `killed run ${kill}`,
      'lines written': upTo,
      'stored before': before,
      'stored after': after.rows,
      doubled: after.doubled.length,
    });
  }

  // The whole file again, from a file this time: the events stored already are recognised, the rest stored.
  const storedBefore = await countStored(db.pool, site);
  const rerun = await run(CLI, ['ingest', file, '--batch-size', String(BATCH), '--no-progress', '--json'], db.env());
  expect({ code: rerun.code, stderr: rerun.stderr }).toEqual({ code: 0, stderr: '' });
  const summary = JSON.parse(rerun.stdout) as {
    lines: number;
    accepted: number;
    inserted: number;
    duplicates: number;
    rejected: number;
  };
  expect(summary).toMatchObject({
    lines: EVENTS,
    accepted: EVENTS,
    rejected: 0,
    inserted: EVENTS - storedBefore,
    duplicates: storedBefore,
  });

  const stored = await storedNumbers(db.pool, site, EVENTS);
  figures.push({
    run: 'full re-run',
    'lines written': EVENTS,
    'stored before': storedBefore,
    'stored after': stored.rows,
    doubled: stored.doubled.length,
  });
  printFigures(`ingest SIGKILL (${FULL ? 'full' : 'CI'} form): runs`, figures);
  printFigures('ingest SIGKILL: events', [
    {
      sent: EVENTS,
      stored: stored.distinct,
      rows: stored.rows,
      lost: stored.missing.length,
      doubled: stored.doubled.length,
    },
  ]);
  expect(stored.missing).toEqual([]);
  expect(stored.doubled).toEqual([]);
  expect(stored.rows).toBe(EVENTS);
}, 900_000);
