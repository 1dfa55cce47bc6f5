/**
 * The worker process (`node dist/worker/main.js`) SIGKILLed mid-tick and mid-action, then replaced.
 *
 * Each kill is placed, not hoped for: the test holds a lock the in-flight activity needs (the
 * `assessments` table for the tick's assessment, the site's `site_controls` row for its action), waits
 * until the activity is blocked on it, then either
 *   - kills the worker while it waits (the write never happened: the retry must make it), or
 *   - freezes the Temporal server (SIGSTOP), releases the lock, waits until the write is in the database,
 *     kills the worker and thaws the server (the write happened but was never reported: the retry must
 *     find it and not write again).
 * CI form: one kill of the second kind in each activity; full form (TH_FAULTS_FULL=1): both kinds in each.
 * Afterwards, from the database and every run's history: each tick assessed once, each control change
 * applied once, the audit consistent with the controls, no workflow task failure.
 */
import type { PoolClient } from 'pg';
import { workflowIdForSite } from '../../core/common/names';
import { assessmentKey, controlsKey } from '../../core/control/keys';
import { type SiteHealthSummary, stateQuery, stopUpdate } from '../../loop/messages';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { checkLoop, printFigures, waitForLoop } from '../kit/fault-checks';
import { FULL, startFaultStack, until, type FaultStack, type WorkerProcess } from '../kit/fault-stack';

type Kill = { activity: 'assessSite' | 'applyActions'; written: boolean };

const KILLS: Kill[] = FULL
  ? [
      { activity: 'assessSite', written: false },
      { activity: 'assessSite', written: true },
      { activity: 'applyActions', written: false },
      { activity: 'applyActions', written: true },
    ]
  : [
      { activity: 'assessSite', written: false },
      { activity: 'applyActions', written: true },
    ];

let stack: FaultStack;
beforeAll(async () => {
  stack = await startFaultStack('worker');
}, 300_000);
afterAll(async () => stack?.close(), 120_000);

/** Holds what the activity needs; resolves once a backend is blocked behind it. */
async function block(locker: PoolClient, activity: Kill['activity'], site: string): Promise<void> {
  await locker.query('BEGIN');
  // EXCLUSIVE blocks the assessment's INSERT but not its reads: the activity has done its work and waits to write it.
  if (activity === 'assessSite') await locker.query('LOCK TABLE assessments IN EXCLUSIVE MODE');
  else await locker.query('SELECT 1 FROM site_controls WHERE site = $1 FOR UPDATE', [site]);
  const lockPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  await until(
    async () => {
      const { rows } = await stack.pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
        [lockPid],
      );
      return Number(rows[0]!.n) > 0 ? true : undefined;
    },
    `${activity} blocked on the test's lock`,
    60_000,
  );
}

test(
  'SIGKILL of the worker mid-tick and mid-action: ' + 'every tick assessed once, every control change applied once',
  async () => {
    const site = await prepareSite(stack.pool, 'worker-kill');
    await ingestNow(stack.pool, site, { ok: 100 });
    // 3 s activity timeouts: a dead worker's attempt is retried 3 s after it started. A short run, so the
    // kills land in different runs of the chain.
    const input = loopInput(site, { timeouts: { activityMs: 3_000 }, maxTicksPerRun: 6 });
    const { handle, healthy } = await startHealthySite(stack.client, stack.taskQueue, input);
    let worker: WorkerProcess = stack.firstWorker;
    const killed: Array<{ kill: string; tick: number }> = [];

    for (const kill of KILLS) {
      // Actions need a control change on the next tick: a degrading site steps its controls down each tick.
      if (kill.activity === 'applyActions' && killed.every((k) => !k.kill.startsWith('applyActions'))) {
        await ingestNow(stack.pool, site, { hard: 60, ok: 40 });
        await waitForLoop(handle, 'degrading', (s) => s.band === 'degrading', 60_000);
      }
      const locker = await stack.pool.connect();
      let tick: number;
      try {
        await block(locker, kill.activity, site);
        const pending = ((await handle.describe()).raw.pendingActivities ?? []).map((a) => a.activityType?.name);
        // The assessment runs as a local activity (no pending activity on the server) unless its local
        // attempts already ran out and the tick fell back to the regular one; an action is always regular.
        if (kill.activity === 'assessSite') expect(pending.filter((p) => p !== 'assessSite')).toEqual([]);
        else expect(pending).toEqual([kill.activity]);
        const state = await handle.query(stateQuery);
        tick = state.tick + 1;
        const key =
          kill.activity === 'assessSite'
            ? assessmentKey(site, state.chainId, tick)
            : controlsKey(assessmentKey(site, state.chainId, tick));
        if (kill.written) {
          stack.temporal.freeze();
          try {
            await locker.query('COMMIT');
            const table =
              kill.activity === 'assessSite'
                ? 'SELECT 1 FROM assessments WHERE assessment_key = $1'
                : 'SELECT 1 FROM control_audit WHERE action_key = $1';
            await until(
              async () => ((await stack.pool.query(table, [key])).rowCount === 1 ? true : undefined),
              `${key} written`,
              30_000,
            );
            await worker.crash();
          } finally {
            stack.temporal.thaw();
          }
        } else {
          await worker.crash();
          await locker.query('COMMIT');
        }
      } finally {
        await locker.query('ROLLBACK').catch(() => undefined);
        locker.release();
      }
      killed.push({ kill: `${kill.activity} ${kill.written ? 'after its write' : 'before its write'}`, tick });
      worker = await stack.startWorker();
      await waitForLoop(handle, `two ticks past ${tick} on the new worker`, (s) => s.tick >= tick + 2, 120_000);
    }
    expect(worker.alive).toBe(true);

    const stopped = await handle.executeUpdate(stopUpdate, {
      args: [{ who: 'faults@example.com', why: 'fault test done' }],
    });
    expect(stopped.band).toBe('stopped');
    const summary = (await handle.result()) as SiteHealthSummary;
    expect(summary.ticks).toBeGreaterThan(healthy.tick);

    const check = await checkLoop({
      client: stack.client,
      pool: stack.pool,
      site,
      workflowId: workflowIdForSite(site),
      chainId: healthy.chainId,
      ticks: summary.ticks,
    });
    // The killed ticks: assessed once, and (for actions) their change applied once.
    const auditKeys = check.audit.map((a) => a.actionKey);
    for (const k of killed.filter((x) => x.kill.startsWith('applyActions'))) {
      expect(auditKeys.filter((key) => key === controlsKey(assessmentKey(site, healthy.chainId, k.tick)))).toHaveLength(
        1,
      );
    }
    // The degrading steps continue each other (16 → 12 → 9 → …): none skipped, none repeated.
    const limits = check.audit.map((a) => a.newControls.concurrencyLimit);
    const steps = limits.slice(1, limits.indexOf(Math.min(...limits)) + 1);
    steps.forEach((l, i) => expect(l).toBe(Math.max(1, Math.floor((i === 0 ? 16 : steps[i - 1]!) * 0.75))));
    expect(check.figures.decisions).toBe(1);
    // A worker killed before its write leaves work that must be taken over: a local assessment's workflow
    // task times out and runs again on the new worker; an activity's attempt is retried. One killed after
    // its write may already have sent its completion (in the frozen server's socket buffer), which the
    // thawed server then takes: nothing taken over, and no harm — the checks above hold either way.
    expect(check.figures.activityRetries + check.figures.workflowTaskTimeouts).toBeGreaterThanOrEqual(
      KILLS.filter((k) => !k.written).length,
    );

    printFigures(`worker SIGKILL (${FULL ? 'full' : 'CI'} form)`, [
      ...killed.map((k) => ({ kill: k.kill, 'at tick': k.tick })),
    ]);
    printFigures('worker SIGKILL: the loop afterwards', [{ ...check.figures }]);
  },
  900_000,
);
