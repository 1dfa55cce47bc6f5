/**
 * Bad data never wedges a loop: an assessment that fails on its data (here a window the scoring refuses,
 * as one event with `bytes: 2^53 − 1` used to cause) is not retried forever. The loop says so in its
 * state, the `LoopProblem` search attribute and one notification, keeps its controls, still takes
 * decisions, and recovers by itself once the data can be assessed again.
 */
import { LoopProblem } from '../../loop/search-attributes';
import { historyQuery, pauseUpdate, stopUpdate } from '../../loop/messages';
import { readControls } from '../../server/db/controls';
import { listNotifications } from '../../server/db/notifications';
import { readSiteWindows } from '../../server/db/signal-store';
import { WindowValidationError } from '../../core/scoring/window';
import {
  createLoopWorker,
  ingestNow,
  loopInput,
  prepareSite,
  startHealthySite,
  waitForState,
} from '../kit/control-loop';
import { eventually, openHarness, testLogger, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h.close();
});

test(
  'an assessment failing on its data is reported, not retried forever; ' + 'decisions still work; the loop recovers',
  async () => {
    const site = await prepareSite(h.pool, 'data-error');
    await ingestNow(h.pool, site, { ok: 100 });
    const data = { broken: false, reads: 0 };
    const readWindows: typeof readSiteWindows = async (pool, s, spec) => {
      if (s === site && data.broken) {
        data.reads += 1;
        throw new WindowValidationError(
          'current.bytes: expected a non-negative number below 2^53 (got 18014398509481982)',
        );
      }
      return readSiteWindows(pool, s, spec);
    };
    const { worker, connection } = await createLoopWorker(h, {
      readWindows,
      uiUrl: 'http://ui.test',
      logger: testLogger,
    });
    try {
      await worker.runUntil(async () => {
        const { handle, healthy } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
        const controlsBefore = await readControls(h.pool, site);

        data.broken = true;
        const failing = await waitForState(
          handle,
          'two failed ticks',
          (s) => s.problem?.kind === 'assessment_failed' && s.problem.ticks >= 2,
        );
        expect(failing.problem!.message).toContain('current.bytes');
        expect(failing.problem!.message).toContain('failed on its data');
        // Each failed tick read once: the data error was not retried.
        expect(data.reads).toBe(failing.problem!.ticks);
        expect(failing.band).toBe('healthy');
        expect(failing.tick).toBeGreaterThan(healthy.tick);
        expect((await handle.describe()).typedSearchAttributes.get(LoopProblem)).toBe('assessment_failed');
        expect(await readControls(h.pool, site)).toMatchObject({ version: controlsBefore!.version });
        const notices = await eventually(async () => {
          const n = (await listNotifications(h.pool, site)).filter((x) => x.kind === 'assessment_failed');
          return n.length > 0 ? n : undefined;
        }, 'the owner told');
        expect(notices).toHaveLength(1);
        expect(notices[0]!.recipient).toBe(`owner@${site}`);

        // The loop's other duties go on: a person can hold the site.
        const paused = await handle.executeUpdate(pauseUpdate, {
          args: [{ who: 'ops@example.com', why: 'assessments failing' }],
        });
        expect(paused.controls).toMatchObject({ paused: true });

        data.broken = false;
        const recovered = await waitForState(
          handle,
          'assessed again',
          (s) => s.problem === null && s.tick > failing.tick,
        );
        expect(recovered.awaitingHuman).toMatchObject({ kind: 'manual' });
        await eventually(
          async () =>
            (await handle.describe()).typedSearchAttributes.get(LoopProblem) === undefined ? true : undefined,
          'LoopProblem removed',
        );
        const ticks = await handle.query(historyQuery);
        // Every tick is in the history, contiguous, the failed ones marked as such.
        expect(ticks.map((t) => t.tick)).toEqual(ticks.map((_, i) => ticks[0]!.tick + i));
        expect(ticks.filter((t) => t.state === 'failed').length).toBeGreaterThanOrEqual(failing.problem!.ticks);

        await handle.executeUpdate(stopUpdate, { args: [{ who: 'ops@example.com', why: 'done' }] });
        await handle.result();
        const events = (await handle.fetchHistory()).events ?? [];
        expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
      });
    } finally {
      await connection.close();
    }
  },
);
