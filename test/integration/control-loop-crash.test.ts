/**
 * A worker killed mid-tick and replaced: the real worker entry (`node dist/worker/main.js`) runs as a
 * child process; the test holds the site's controls row lock, so the tick's action activity is in flight
 * (blocked inside its transaction) when the worker is SIGKILLed. A replacement worker takes over, the
 * action is retried, and the database shows every assessment once and every action applied once.
 */
import { randomUUID } from 'node:crypto';
import { stateQuery } from '../../loop/messages';
import { controlAudit } from '../../server/db/controls';
import { listNotifications } from '../../server/db/notifications';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { WORKER, cleanEnv, startUntil, waitForExit } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

test(
  'a worker SIGKILLed while an action is in flight: ' + 'the loop continues, nothing applied twice, no assessment lost',
  async () => {
    const taskQueue = `crash-${randomUUID()}`;
    const site = await prepareSite(h.pool, 'crash');
    await ingestNow(h.pool, site, { ok: 100 });

    const child = await startUntil(
      WORKER,
      cleanEnv({
        TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
        DATABASE_URL: env('DATABASE_URL'),
        TEMPORAL_TASK_QUEUE: taskQueue,
        LOG_LEVEL: 'info',
      }),
      /worker polling/,
      120_000,
    );
    let childAlive = true;
    const locker = await h.pool.connect();
    try {
      // Activity timeouts of 3 s: the dead worker's attempt is retried 3 s after it started.
      const { handle, healthy } = await startHealthySite(
        h.client,
        taskQueue,
        loopInput(site, { timeouts: { activityMs: 3_000 } }),
      );

      // Hold the controls row: the next action blocks inside its transaction, in flight.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM site_controls WHERE site = $1 FOR UPDATE', [site]);
      const lockPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await ingestNow(h.pool, site, { hard: 60, ok: 40 });
      await eventually(async () => {
        const blocked = await h.pool.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [lockPid],
        );
        return Number(blocked.rows[0]!.n) > 0 ? true : undefined;
      }, 'the action activity blocked on the controls row');
      const described = await handle.describe();
      const pending = (described.raw.pendingActivities ?? []).map((a) => a.activityType?.name);
      expect(pending).toEqual(['applyActions']);
      const inFlightTick = (await handle.query(stateQuery)).tick + 1;
      expect(inFlightTick).toBeGreaterThan(healthy.tick);

      child.child.kill('SIGKILL');
      await waitForExit(child.child);
      childAlive = false;
      await locker.query('ROLLBACK');

      const replacement = await createTestWorker(h, taskQueue);
      await replacement.worker.runUntil(async () => {
        const s = await waitForState(
          handle,
          'three degrading steps after the crash',
          (x) => x.band === 'degrading' && (x.controls?.concurrencyLimit ?? 99) <= 6,
          90_000,
        );
        expect(s.tick).toBeGreaterThan(inFlightTick);
        await handle.terminate('test done');
      });
      await replacement.connection.close();

      // Every tick assessed exactly once, none missing.
      const { rows } = await h.pool.query<{ tick: string; n: string }>(
        'SELECT tick, count(*) AS n FROM assessments WHERE site = $1 GROUP BY tick ORDER BY tick',
        [site],
      );
      const ticks = rows.map((r) => Number(r.tick));
      expect(ticks).toEqual(Array.from({ length: ticks.length }, (_, i) => i + 1));
      expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
      expect(ticks.length).toBeGreaterThanOrEqual(inFlightTick);

      // Every action once: the in-flight one included, each step continuing the previous one.
      const audit = await controlAudit(h.pool, site);
      audit.forEach((row, i) => {
        expect(row.newControls.version).toBe(i + 1);
        if (i > 0) expect(row.oldControls).toEqual(audit[i - 1]!.newControls);
      });
      expect(audit.map((a) => a.newControls.concurrencyLimit).slice(0, 4)).toEqual([16, 12, 9, 6]);
      expect(audit.filter((a) => a.actionKey.endsWith(`/${inFlightTick}/controls`))).toHaveLength(1);
      const notes = await listNotifications(h.pool, site);
      expect(notes.filter((n) => n.kind === 'degrading')).toHaveLength(1);
    } finally {
      if (childAlive) child.child.kill('SIGKILL');
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
  },
);
