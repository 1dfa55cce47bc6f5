/**
 * A flood of signals cannot grow a loop's history without bound: every signal stays in the history,
 * refused or not, and a loop waiting out a long tick interval used to ignore the server's suggestion to
 * continue as new until its next tick. Now it wakes on it and continues as new at once, with no extra tick.
 */
import { type PauseInput, pauseSignal, stateQuery } from '../../loop/messages';
import { ingestNow, loopInput, prepareSite, startHealthySite } from '../kit/control-loop';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

test('refused signals piling up while the loop waits: it continues as new before its next tick', async () => {
  const site = await prepareSite(h.pool, 'flood');
  await ingestNow(h.pool, site, { ok: 100 });
  const { worker, connection } = await createTestWorker(h);
  try {
    await worker.runUntil(async () => {
      // A tick every 10 minutes: the flood arrives while the loop waits.
      const { handle, healthy } = await startHealthySite(
        h.client,
        h.taskQueue,
        loopInput(site, { tickIntervalMs: 600_000 }),
      );
      const firstRun = (await handle.describe()).runId;
      // Each refused (unknown field), each 1 MB in the history: 6 MB, past the server's suggestion.
      for (let i = 0; i < 6; i++)
        await handle.signal(pauseSignal, { who: 'flood', why: 'x', padding: 'x'.repeat(1_000_000) } as PauseInput);
      // The handle from start is bound to the first run; follow the workflow id to its latest run.
      const latest = h.client.workflow.getHandle(handle.workflowId);
      // The server decides on its suggestion when it schedules a workflow task; signals that arrive while
      // one is pending join it. So, as a real flood would, keep a small refused signal coming until the
      // loop hands over: the next task is scheduled with the large history in view.
      const next = await eventually(
        async () => {
          const d = await latest.describe();
          if (d.runId !== firstRun) return d;
          await latest.signal(pauseSignal, { who: 'flood', why: 'x', padding: 'x' } as PauseInput);
          return undefined;
        },
        'continued as new while waiting',
        60_000,
      );
      expect(next.status.name).toBe('RUNNING');
      const state = await latest.query(stateQuery);
      expect(state.runs).toBe(2);
      // The first run did not tick again before it handed over (the next run ticks as it starts).
      expect(state.tick).toBeLessThanOrEqual(healthy.tick + 1);
      expect(state.rejected.length).toBeGreaterThan(0);
      expect(state.rejected.every((r) => r.length <= 500)).toBe(true);
      // The first run ended by continuing as new (its 6 MB history is beyond a client's 4 MB message limit to fetch).
      expect((await h.client.workflow.getHandle(handle.workflowId, firstRun).describe()).status.name).toBe(
        'CONTINUED_AS_NEW',
      );
    });
  } finally {
    await connection.close();
  }
});
