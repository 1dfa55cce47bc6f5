/**
 * PostgreSQL stopped during ingest, ticks and decisions, then started again on the same data folder.
 *
 * Before the outage: a site ticking healthy, a site paused and waiting for a person, and
 * `target-health ingest` reading a file from its stdin with the first part stored. During it: the rest
 * of the file is sent (the CLI must exit 3 naming the line to send again from — every earlier line
 * stored), a second run is started (exit 3, nothing stored), a `pause` signal goes to the ticking site
 * and a `resume` update to the waiting one, and both loops' ticks are seen failing. After it: the file
 * is sent again from the named line and the second run again; the decisions are applied once; the loops
 * carry on. From the database and every run's history: every acknowledged event stored exactly once
 * (then every event sent), each tick assessed once, each control change and decision applied once, the
 * audit consistent with the controls, the wait intact until the decision, no workflow task failure, the
 * worker still running. CI form: a 15 s outage, 6,000 events; full form (TH_FAULTS_FULL=1): 60 s,
 * 60,000 events.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateStage } from '@temporalio/client';
import { workflowIdForSite } from '../../core/common/names';
import { pauseSignal, resumeUpdate, type SiteHealthSummary, stateQuery, stopUpdate } from '../../loop/messages';
import { listDecisions } from '../../server/db/decisions';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { checkLoop, printFigures, waitForLoop, type LoopFigures } from '../kit/fault-checks';
import { IngestRun, countStored, numberedEventLines, resendFrom, storedNumbers } from '../kit/fault-events';
import { FULL, startFaultStack, until, type FaultStack } from '../kit/fault-stack';
import { CLI, run } from '../kit/processes';

const OUTAGE_MS = (FULL ? 60 : 15) * 1000;
const EVENTS = FULL ? 60_000 : 6_000;
const BATCH = 500;
/** Events of a second run, started while PostgreSQL is down. */
const LATE_EVENTS = 1_000;

let stack: FaultStack;
beforeAll(async () => {
  stack = await startFaultStack('postgres');
}, 300_000);
afterAll(async () => stack?.close(), 120_000);

/** The loop's tick has failed at least once against the stopped database (its activity is being retried). */
async function tickFailing(handle: {
  describe(): Promise<{
    raw: {
      pendingActivities?: Array<{ activityType?: { name?: string | null } | null; attempt?: number | null }> | null;
    };
  }>;
}): Promise<true | undefined> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  // The tick's assessment or, for a loop applying a decision that arrived during the outage, its action:
  // whichever the loop is doing, it is retrying against the stopped database.
  return pending.some(
    (a) => (a.activityType?.name === 'assessSite' || a.activityType?.name === 'applyActions') && (a.attempt ?? 1) >= 2,
  )
    ? true
    : undefined;
}

test(
  `PostgreSQL stopped for ${OUTAGE_MS / 1000} s during ingest, ticks and decisions: nothing acknowledged lost, ` +
    `nothing applied twice`,
  async () => {
    const [waitingSite, tickingSite] = [
      await prepareSite(stack.pool, 'pg-waiting'),
      await prepareSite(stack.pool, 'pg-ticking'),
    ];
    await ingestNow(stack.pool, waitingSite, { ok: 100 });
    await ingestNow(stack.pool, tickingSite, { ok: 100 });
    const waiting = await startHealthySite(
      stack.client,
      stack.taskQueue,
      loopInput(waitingSite, { maxTicksPerRun: 8 }),
    );
    const ticking = await startHealthySite(
      stack.client,
      stack.taskQueue,
      loopInput(tickingSite, { maxTicksPerRun: 8 }),
    );
    // Stamped 2.5 minutes ago: inside the current window, but outside the evidence a resume starts from
    // (whole minutes from the decision on), so a resumed site is not paused again by the same traffic.
    await ingestNow(stack.pool, waitingSite, { hard: 60, ok: 40, challenge: 100, soft: 100 }, 150_000);
    const paused = await waitForLoop(
      waiting.handle,
      'resisting and waiting',
      (s) => s.band === 'resisting' && s.awaitingHuman !== null,
      120_000,
    );

    // Ingest: the first half of the file stored before the outage.
    const ingestSite = `pg-ingest-${randomUUID().slice(0, 8)}.example.com`;
    const lines = numberedEventLines(ingestSite, EVENTS);
    const half = EVENTS / 2;
    const ingest = new IngestRun(stack.env(), ['--batch-size', String(BATCH)]);
    await ingest.write(lines.slice(0, half));
    await until(
      async () => ((await countStored(stack.pool, ingestSite)) === half ? true : undefined),
      'the first half stored',
      120_000,
    );
    const [w0, t0] = [await waiting.handle.query(stateQuery), await ticking.handle.query(stateQuery)];

    // --- the outage ---
    const outageStart = Date.now();
    await stack.postgres.stop();
    await ingest.offer(lines.slice(half));
    ingest.end();
    const ingested = await ingest.finished(OUTAGE_MS + 60_000);
    const during = { ingestExit: ingested.code, ingestExitAfterMs: Date.now() - outageStart };
    expect(ingested.code).toBe(3);
    // An outage is said in one line, not a stack trace.
    expect(ingested.output).not.toMatch(/^\s+at /m);
    const resendLine = resendFrom(ingested.output);
    const acknowledged = resendLine - 1;
    expect(acknowledged).toBeGreaterThanOrEqual(half);

    // A run started during the outage: exit 3, nothing stored, said in one line.
    const lateSite = `pg-late-${randomUUID().slice(0, 8)}.example.com`;
    const lateLines = numberedEventLines(lateSite, LATE_EVENTS);
    const lateFile = join(stack.dir, 'late.ndjson');
    writeFileSync(lateFile, lateLines.map((l) => `${l}\n`).join(''));
    const late = await run(CLI, ['ingest', lateFile, '--no-progress', '--json'], stack.env());
    expect(late.code).toBe(3);
    expect(late.stderr).toMatch(/not answering.*nothing was stored/);
    expect(late.stderr).not.toMatch(/^\s+at /m);

    await ticking.handle.signal(pauseSignal, { who: 'faults@example.com', why: 'paused during the outage' });
    const resume = await waiting.handle.startUpdate(resumeUpdate, {
      args: [{ who: 'faults@example.com', why: 'resumed during the outage', mode: 'cautious' }],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    // Seeing each loop's tick fail is a condition, not a timing claim: on a busy machine it can take longer
    // than the CI-sized outage, which then simply lasts until it is seen.
    await until(() => tickFailing(waiting.handle), "the waiting site's work failing", Math.max(OUTAGE_MS, 90_000));
    await until(() => tickFailing(ticking.handle), "the ticking site's work failing", Math.max(OUTAGE_MS, 90_000));
    // The outage lasts its full length (the fault's size, not a wait for the system).
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - outageStart))));
    await stack.postgres.start();
    const outageMs = Date.now() - outageStart;

    // --- after: what the CLI acknowledged is there, once; then the rest of the file, sent again ---
    const afterOutage = await storedNumbers(stack.pool, ingestSite, acknowledged);
    expect(afterOutage.missing).toEqual([]);
    expect(afterOutage.doubled).toEqual([]);
    const rest = join(stack.dir, 'rest.ndjson');
    writeFileSync(
      rest,
      lines
        .slice(resendLine - 1)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const resent = await run(
      CLI,
      ['ingest', rest, '--batch-size', String(BATCH), '--no-progress', '--json'],
      stack.env(),
    );
    expect({ code: resent.code, stderr: resent.stderr }).toEqual({ code: 0, stderr: '' });
    const stored = await storedNumbers(stack.pool, ingestSite, EVENTS);
    expect(stored.missing).toEqual([]);
    expect(stored.doubled).toEqual([]);
    expect(stored.rows).toBe(EVENTS);
    // The run refused during the outage, sent again: all of it, once.
    expect(await countStored(stack.pool, lateSite)).toBe(0);
    const lateAgain = await run(CLI, ['ingest', lateFile, '--no-progress', '--json'], stack.env());
    expect({ code: lateAgain.code, stderr: lateAgain.stderr }).toEqual({ code: 0, stderr: '' });
    const lateStored = await storedNumbers(stack.pool, lateSite, LATE_EVENTS);
    expect(lateStored.missing).toEqual([]);
    expect(lateStored.rows).toBe(LATE_EVENTS);

    // The decisions sent during the outage, applied once each; the loops carry on.
    const resumed = await resume.result();
    expect(resumed).toMatchObject({ decision: 'resume', controls: { paused: false } });
    const manual = await waitForLoop(
      ticking.handle,
      'the ticking site paused by the signal',
      (s) => s.awaitingHuman?.kind === 'manual' && s.lastDecision?.kind === 'pause',
      120_000,
    );
    const [w1, t1] = [
      await waitForLoop(
        waiting.handle,
        'the resumed site ticking',
        (s) => s.tick >= w0.tick + 3 && s.awaitingHuman === null,
        120_000,
      ),
      await waitForLoop(ticking.handle, 'the paused site ticking', (s) => s.tick >= manual.tick + 2, 120_000),
    ];
    expect(t1.awaitingHuman).toEqual(manual.awaitingHuman);
    // The wait was intact up to the decision: the resume was taken on the pause of before the outage.
    const resumeRow = (await listDecisions(stack.pool, waitingSite)).find((d) => d.kind === 'resume');
    expect(resumeRow?.awaitingSince?.toISOString()).toBe(new Date(paused.awaitingHuman!.since).toISOString());
    expect(stack.firstWorker.alive).toBe(true);

    const figures: LoopFigures[] = [];
    for (const loop of [waiting, ticking]) {
      await loop.handle.executeUpdate(stopUpdate, { args: [{ who: 'faults@example.com', why: 'fault test done' }] });
      const summary = (await loop.handle.result()) as SiteHealthSummary;
      const check = await checkLoop({
        client: stack.client,
        pool: stack.pool,
        site: loop.healthy.site,
        workflowId: workflowIdForSite(loop.healthy.site),
        chainId: loop.healthy.chainId,
        ticks: summary.ticks,
      });
      // resume + stop, pause + stop.
      expect(check.figures.decisions).toBe(2);
      figures.push(check.figures);
    }
    printFigures(`PostgreSQL outage (${FULL ? 'full' : 'CI'} form)`, [
      {
        'outage s': (outageMs / 1000).toFixed(1),
        'ingest exit': String(during.ingestExit),
        'exit after s': (during.ingestExitAfterMs / 1000).toFixed(1),
        'resend from line': resendLine,
        'waiting: tick before': w0.tick,
        'waiting: tick after': w1.tick,
        'ticking: tick before': t0.tick,
        'ticking: tick after': t1.tick,
      },
    ]);
    printFigures('PostgreSQL outage: events', [
      {
        run: 'mid-file at the outage',
        sent: EVENTS,
        acknowledged,
        'acknowledged stored': acknowledged - afterOutage.missing.length,
        stored: stored.distinct,
        rows: stored.rows,
        lost: stored.missing.length,
        doubled: stored.doubled.length,
      },
      {
        run: 'started during it',
        sent: LATE_EVENTS,
        acknowledged: 0,
        'acknowledged stored': 0,
        stored: lateStored.distinct,
        rows: lateStored.rows,
        lost: lateStored.missing.length,
        doubled: lateStored.doubled.length,
      },
    ]);
    printFigures(
      'PostgreSQL outage: the loops afterwards',
      figures.map((f) => ({ ...f })),
    );
  },
  900_000,
);
