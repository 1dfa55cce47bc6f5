/**
 * The production path's restarts, on the cluster stack (the Temporal server on PostgreSQL, two workers):
 *   - the Temporal server restarted (SIGTERM, as a deploy does) while one site waits for a person and
 *     another ticks: the wait is kept (same since, same reminders' schedule), the decision sent after the
 *     restart is applied once, the ticking loop carries on;
 *   - PostgreSQL (Temporal's databases and the product's, one server) shut down for 10 s mid-tick (an
 *     assessment in flight, placed by a lock) and started again: the server and the tick's work retry,
 *     the loop carries on.
 * Afterwards, from the database and the histories: every tick assessed once, none missing, each
 * decision applied once, no workflow task failure.
 */
import { workflowIdForSite } from '../../core/common/names';
import { type SiteHealthSummary, pauseUpdate, resumeUpdate, stateQuery, stopUpdate } from '../../loop/messages';
import { listDecisions } from '../../server/db/decisions';
import { alive, useClusterStack } from '../kit/cluster-process';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { checkLoop, printFigures, waitForLoop } from '../kit/fault-checks';
import { until } from '../kit/fault-stack';

const cluster = useClusterStack(2);

const stop = { who: 'cluster@example.com', why: 'cluster test done' };

test(
  'the Temporal server restarted: a pending human wait is kept and its decision applied once, a ticking loop ' +
    'carries on',
  async () => {
    const { stack, client, pool } = cluster;
    const [waitingSite, tickingSite] = [await prepareSite(pool, 'cl-waiting'), await prepareSite(pool, 'cl-ticking')];
    await ingestNow(pool, waitingSite, { ok: 100 });
    await ingestNow(pool, tickingSite, { ok: 100 });
    const waiting = await startHealthySite(client, 'target-health', loopInput(waitingSite));
    const ticking = await startHealthySite(client, 'target-health', loopInput(tickingSite));
    await waiting.handle.executeUpdate(pauseUpdate, {
      args: [{ who: 'cluster@example.com', why: 'held across the restart' }],
    });
    const paused = await waitForLoop(
      waiting.handle,
      'paused, waiting for a person',
      (s) => s.awaitingHuman !== null,
      60_000,
    );
    const before = await ticking.handle.query(stateQuery);

    const restartStarted = Date.now();
    await stack.restartServer();
    const restartMs = Date.now() - restartStarted;

    // The wait is the same wait (not restarted), and the ticking loop ticks on.
    const after = await waitForLoop(
      waiting.handle,
      'still waiting after the restart',
      (s) => s.awaitingHuman !== null,
      60_000,
    );
    expect(after.awaitingHuman!.since).toBe(paused.awaitingHuman!.since);
    await waitForLoop(
      ticking.handle,
      'two ticks after the restart',
      (s) => s.tick >= before.tick + 2 && Date.parse(s.lastAssessedAt ?? '') > restartStarted,
      120_000,
    );
    const resumed = await waiting.handle.executeUpdate(resumeUpdate, {
      args: [{ who: 'cluster@example.com', why: 'after the restart', mode: 'cautious' }],
    });
    expect(resumed.decision).toBe('resume');
    await waitForLoop(
      waiting.handle,
      'resumed and ticking',
      (s) => s.awaitingHuman === null && s.band !== 'resisting',
      60_000,
    );
    expect(stack.workers.every((w) => alive(w.pid))).toBe(true);

    const figures = [];
    for (const [site, loop] of [
      [waitingSite, waiting],
      [tickingSite, ticking],
    ] as const) {
      await loop.handle.executeUpdate(stopUpdate, { args: [stop] });
      const summary = (await loop.handle.result()) as SiteHealthSummary;
      const check = await checkLoop({
        client,
        pool,
        site,
        workflowId: workflowIdForSite(site),
        chainId: loop.healthy.chainId,
        ticks: summary.ticks,
      });
      expect(check.figures.ticksDoubled).toBe(0);
      expect(check.figures.ticksMissing).toBe(0);
      figures.push({ 'restart s': (restartMs / 1000).toFixed(1), ...check.figures });
    }
    // pause, resume, stop of the waiting site: each stored once.
    expect((await listDecisions(pool, waitingSite)).map((d) => d.kind).sort()).toEqual(['pause', 'resume', 'stop']);
    printFigures('cluster: the Temporal server restarted', figures);
  },
  600_000,
);

test(
  'PostgreSQL shut down for 10 s mid-tick and started again: ' + 'every tick assessed once, the loop carries on',
  async () => {
    const { stack, client, pool } = cluster;
    const site = await prepareSite(pool, 'cl-pg');
    await ingestNow(pool, site, { ok: 100 });
    const { handle, healthy } = await startHealthySite(client, 'target-health', loopInput(site));
    // Mid-tick, placed: the next assessment holds a connection, blocked on the test's lock, when the
    // server goes down (the lock goes with it).
    const locker = await pool.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE assessments IN EXCLUSIVE MODE');
    const lockPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await until(
      async () => {
        const { rows } = await pool.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [lockPid],
        );
        return Number(rows[0]!.n) > 0 ? true : undefined;
      },
      'the assessment blocked on the lock',
      60_000,
    );
    locker.on('error', () => undefined);
    const before = await handle.query(stateQuery);
    const outageStarted = Date.now();
    await stack.restartPostgres(10_000);
    const outageMs = Date.now() - outageStarted;
    locker.release(true);
    await waitForLoop(
      handle,
      'two ticks after PostgreSQL is back',
      (s) => s.tick >= before.tick + 2 && Date.parse(s.lastAssessedAt ?? '') > outageStarted + 10_000,
      180_000,
    );
    expect(stack.workers.every((w) => alive(w.pid))).toBe(true);

    await handle.executeUpdate(stopUpdate, { args: [stop] });
    const summary = (await handle.result()) as SiteHealthSummary;
    const check = await checkLoop({
      client,
      pool,
      site,
      workflowId: workflowIdForSite(site),
      chainId: healthy.chainId,
      ticks: summary.ticks,
    });
    expect(check.figures.ticksDoubled).toBe(0);
    expect(check.figures.ticksMissing).toBe(0);
    // The tick in flight was done again: its local attempts (a fallback), an activity attempt, or the
    // whole workflow task (its completion could not be stored while the server's database was down).
    expect(
      check.facts.assessmentFallbacks + check.figures.activityRetries + check.figures.workflowTaskTimeouts,
    ).toBeGreaterThanOrEqual(1);
    printFigures('cluster: PostgreSQL shut down for 10 s', [
      { 'down s': (outageMs / 1000).toFixed(1), ...check.figures },
    ]);
  },
  600_000,
);
