/**
 * The production path, run for real (CI-sized): the cluster stack (stack/cluster) — the Temporal server
 * built from go.temporal.io/server on the embedded PostgreSQL with SQL visibility, schemas by its SQL
 * tool, namespace and search attributes by `temporal operator` — with two worker processes.
 *
 * A site loop ticks on it; the worker running the tick's assessment is SIGKILLed mid-tick (placed, not
 * hoped for: the test holds the lock the assessment's write needs and kills the worker whose connection
 * waits on it); the other worker carries on. Afterwards, from the database and the histories: every tick
 * assessed once, none lost, no workflow task failure; the loop is listed by the search attributes.
 */
import { workflowIdForSite } from '../../core/common/names';
import { type SiteHealthSummary, stateQuery, stopUpdate } from '../../loop/messages';
import { RUNNING_SITES_QUERY } from '../../loop/list-queries';
import { alive, useClusterStack } from '../kit/cluster-process';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { checkLoop, printFigures, waitForLoop } from '../kit/fault-checks';
import { until } from '../kit/fault-stack';

const cluster = useClusterStack(2);

test(
  'a site loop on the cluster: one of two workers SIGKILLed mid-tick, the other carries on, every tick assessed ' +
    'once',
  async () => {
    const { stack, client, pool } = cluster;
    const site = await prepareSite(pool, 'cluster');
    await ingestNow(pool, site, { ok: 100 });
    // 3 s activity timeouts: the killed worker's attempt is retried 3 s after it started, on the other worker.
    const input = loopInput(site, { timeouts: { activityMs: 3_000 } });
    const { handle, healthy } = await startHealthySite(client, 'target-health', input);

    // Listed by the search attributes of SQL visibility (the list the README shows).
    await until(
      async () => {
        const ids: string[] = [];
        for await (const w of client.workflow.list({
          query: `${RUNNING_SITES_QUERY} AND TargetSite = '${site}' AND HealthBand = 'healthy'`,
        }))
          ids.push(w.workflowId);
        return ids.includes(workflowIdForSite(site)) ? true : undefined;
      },
      `${site} listed as healthy`,
      60_000,
    );

    // Hold the assessments table: the next tick's assessment does its reads and waits to write.
    const locker = await pool.connect();
    let tick: number;
    let killedPid: number;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE assessments IN EXCLUSIVE MODE');
      const lockPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // The assessment runs as a local activity inside the worker's workflow task: the server shows no
      // pending activity, so the worker is found by its blocked connection (application_name names it).
      const blocked = await until(
        async () => {
          const { rows } = await pool.query<{ app: string }>(
            'SELECT application_name AS app FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
            [lockPid],
          );
          return rows.map((r) => r.app).find((a) => a.startsWith('target-health worker '));
        },
        'the assessment in flight on a worker, blocked on the lock',
        60_000,
      );
      tick = (await handle.query(stateQuery)).tick + 1;
      killedPid = Number(blocked.slice('target-health worker '.length).split('@')[0]);
      expect(stack.workers.map((w) => w.pid)).toContain(killedPid);
      process.kill(killedPid, 'SIGKILL');
      await until(() => (alive(killedPid) ? undefined : true), `worker ${killedPid} gone`, 10_000);
    } finally {
      await locker.query('COMMIT').catch(() => undefined);
      locker.release();
    }
    const survivor = stack.workers.find((w) => w.pid !== killedPid)!;
    await waitForLoop(handle, `two ticks past ${tick} on the other worker`, (s) => s.tick >= tick + 2, 120_000);
    expect(alive(survivor.pid)).toBe(true);

    const stopped = await handle.executeUpdate(stopUpdate, {
      args: [{ who: 'cluster@example.com', why: 'cluster test done' }],
    });
    expect(stopped.band).toBe('stopped');
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
    // The killed worker's work was taken over by the survivor: its workflow task timed out (the local
    // assessment) or, had the tick already fallen back to the regular activity, that activity was retried.
    expect(check.figures.workflowTaskTimeouts + check.figures.activityRetries).toBeGreaterThanOrEqual(1);
    printFigures('cluster: one of two workers SIGKILLed mid-tick', [{ 'killed at tick': tick, ...check.figures }]);
  },
  600_000,
);
