/**
 * The Temporal dev server (SQLite file) SIGKILLed and started again on the same file and port, with one
 * site paused and waiting for a person and another ticking, while the worker process keeps running. Each
 * kill lands with a tick's assessment in flight (held on a lock by the test, released while the server
 * is down: the write happens, its report must reach the restarted server or the attempt be retried).
 *
 * After each restart both loops carry on from where they were: the wait is intact (same since, no control
 * change while waiting, across continue-as-new too: the runs are short), the ticks contiguous. A `resume`
 * sent afterwards is applied once. From the database and every run's history: each tick assessed once,
 * each control change applied once, the audit consistent with the controls, no workflow task failure.
 * CI form: one kill; full form (TH_FAULTS_FULL=1): three.
 */
import { workflowIdForSite } from '../../core/common/names';
import {
  resumeUpdate,
  type SiteHealthState,
  type SiteHealthSummary,
  stateQuery,
  stopUpdate,
} from '../../loop/messages';
import { controlAudit } from '../../server/db/controls';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { checkLoop, printFigures, waitForLoop, type LoopFigures } from '../kit/fault-checks';
import { FULL, startFaultStack, until, type FaultStack } from '../kit/fault-stack';

const KILLS = FULL ? 3 : 1;

let stack: FaultStack;
beforeAll(async () => {
  stack = await startFaultStack('temporal');
}, 300_000);
afterAll(async () => stack?.close(), 120_000);

test(
  'dev server SIGKILLed and restarted with a site paused and waiting: ' + 'the wait survives, ticks stay contiguous',
  async () => {
    const [waitingSite, tickingSite] = [
      await prepareSite(stack.pool, 'waiting'),
      await prepareSite(stack.pool, 'ticking'),
    ];
    await ingestNow(stack.pool, waitingSite, { ok: 100 });
    await ingestNow(stack.pool, tickingSite, { ok: 100 });
    // Short runs: the wait is carried across continue-as-new between the kills.
    const settings = { maxTicksPerRun: 5 };
    const waiting = await startHealthySite(stack.client, stack.taskQueue, loopInput(waitingSite, settings));
    const ticking = await startHealthySite(stack.client, stack.taskQueue, loopInput(tickingSite, settings));

    // Stamped 2.5 minutes ago: inside the current window, but outside the evidence a resume starts from
    // (whole minutes from the decision on), so a resumed site is not paused again by the same traffic.
    await ingestNow(stack.pool, waitingSite, { hard: 60, ok: 40, challenge: 100, soft: 100 }, 150_000);
    const paused = await waitForLoop(
      waiting.handle,
      'resisting and waiting',
      (s) => s.band === 'resisting' && s.awaitingHuman !== null,
      120_000,
    );
    const auditWhileWaiting = (await controlAudit(stack.pool, waitingSite)).length;

    const rounds: Array<Record<string, string | number>> = [];
    for (let kill = 1; kill <= KILLS; kill++) {
      const [w0, t0] = [await waiting.handle.query(stateQuery), await ticking.handle.query(stateQuery)];
      // Killed with a tick's assessment in flight: the test holds the assessments table, so the next
      // tick's activity waits to write; it writes while the server is down and cannot report it.
      const locker = await stack.pool.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE assessments IN EXCLUSIVE MODE');
        const lockPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        await until(
          async () => {
            const { rows } = await stack.pool.query<{ n: string }>(
              'SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
              [lockPid],
            );
            return Number(rows[0]!.n) > 0 ? true : undefined;
          },
          'a tick blocked on the assessments table',
          60_000,
        );
        await stack.temporal.kill();
        await locker.query('COMMIT');
      } finally {
        await locker.query('ROLLBACK').catch(() => undefined);
        locker.release();
      }
      await stack.temporal.start();
      // Both loops carry on: the waiting site for more ticks than a run holds (so its wait crosses a
      // continue-as-new), the other for three.
      const w1 = await waitForLoop(
        waiting.handle,
        `waiting site ticking after restart ${kill}`,
        (s) => s.tick > w0.tick + settings.maxTicksPerRun && s.runs > w0.runs,
        180_000,
      );
      const t1 = await waitForLoop(
        ticking.handle,
        `ticking site ticking after restart ${kill}`,
        (s) => s.tick >= t0.tick + 3,
        180_000,
      );
      expectStillWaiting(w1, paused);
      rounds.push({
        restart: kill,
        'waiting: tick before': w0.tick,
        'waiting: tick after': w1.tick,
        'waiting: run': w1.runs,
        'ticking: tick before': t0.tick,
        'ticking: tick after': t1.tick,
      });
    }
    expect(stack.firstWorker.alive).toBe(true);
    // Nothing changed the paused site's controls while it waited.
    expect((await controlAudit(stack.pool, waitingSite)).length).toBe(auditWhileWaiting);

    // The person's decision, after the restarts: applied once.
    const resumed = await waiting.handle.executeUpdate(resumeUpdate, {
      args: [{ who: 'faults@example.com', why: 'checked after the restart', mode: 'cautious' }],
    });
    expect(resumed).toMatchObject({ decision: 'resume', band: 'degrading', controls: { paused: false } });

    const figures: LoopFigures[] = [];
    for (const [loop, decisions] of [
      [waiting, 2],
      [ticking, 1],
    ] as const) {
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
      expect(check.figures.decisions).toBe(decisions);
      figures.push(check.figures);
    }
    printFigures(`Temporal dev server SIGKILL + restart (${FULL ? 'full' : 'CI'} form)`, rounds);
    printFigures(
      'Temporal dev server SIGKILL + restart: the loops afterwards',
      figures.map((f) => ({ ...f })),
    );
  },
  900_000,
);

function expectStillWaiting(now: SiteHealthState, paused: SiteHealthState): void {
  expect(now.band).toBe('resisting');
  expect(now.awaitingHuman).toEqual(paused.awaitingHuman);
  expect(now.controls).toMatchObject({ paused: true, canaryOnly: true });
  expect(now.chainId).toBe(paused.chainId);
}
