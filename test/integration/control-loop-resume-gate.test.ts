/**
 * The exact human gate (judgement 2): after a resume only traffic from the decision's instant on is
 * judged. Refusals stamped before the decision — in the whole minute before it and in the same minute
 * — never pause the site again; until enough traffic after the decision arrives, the loop holds the
 * decision's controls and says why. Real dev server and PostgreSQL, 1 s ticks.
 */
import { controlAudit } from '../../server/db/controls';
import { listNotifications } from '../../server/db/notifications';
import { resumeUpdate } from '../../loop/messages';
import { eventsOf, ingest } from '../kit/sites-traffic';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { createTestWorker, openHarness, type TestHarness } from '../kit/services';

const MINUTE = 60_000;

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

/** Waits until the wall clock is between `from` and `to` seconds into its minute. */
async function secondsIntoMinute(from: number, to: number): Promise<void> {
  for (;;) {
    const s = (Date.now() % MINUTE) / 1000;
    if (s >= from && s < to) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

test(
  'pause, then resume with refusals in the same minute before the decision: ' + 'the site is not paused again by them',
  async () => {
    const site = await prepareSite(h.pool, 'resume-gate');
    await ingestNow(h.pool, site, { ok: 200 });
    const { worker, connection } = await createTestWorker(h);
    await worker.runUntil(async () => {
      const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
      // The refusals, the pause and the decision must fit in one minute, with a margin for a busy machine.
      await secondsIntoMinute(3, 25);
      const minuteStart = Math.floor(Date.now() / MINUTE) * MINUTE;
      // A wall in the last whole minute: total refusal pauses the site within a few ticks.
      await ingestNow(h.pool, site, { hard: 400 });
      const paused = await waitForState(
        handle,
        'paused by the wall',
        (s) => s.awaitingHuman !== null && s.band === 'resisting',
      );
      // More refusals in this minute, before the decision (the crawler's batch of this minute).
      await ingest(
        h.pool,
        eventsOf(site, { hard: 400 }, (i) => Date.now() - 1 - (i % 1000)),
      );

      const resumed = await handle.executeUpdate(resumeUpdate, {
        args: [{ who: 'erin@example.com', why: 'checked the site by hand: it serves us again', mode: 'cautious' }],
      });
      const decidedAt = Date.parse(resumed.decidedAt);
      expect(Math.floor(decidedAt / MINUTE) * MINUTE).toBe(minuteStart);
      // Late logs of the same minute, stamped just before the decision.
      await ingest(
        h.pool,
        eventsOf(site, { hard: 400 }, (i) => decidedAt - 1 - (i % 500)),
      );

      // Ticks until the decision's minute has fully passed: the first window the gate opens is then
      // [next minute, …) — still empty — and before that there is no whole minute after the decision.
      const gate = Math.ceil(decidedAt / MINUTE) * MINUTE;
      const later = await waitForState(
        handle,
        'ticks past the minute of the decision',
        (s) => s.lastAssessedAt !== null && Date.parse(s.lastAssessedAt) >= gate + 3_000,
        120_000,
      );
      expect(later.awaitingHuman).toBeNull();
      expect(later.band).toBe('degrading');
      // The decision's controls held, and the state says why.
      expect(later.controls).toEqual(resumed.controls);
      expect(later.noScore).toMatchObject({
        state: 'insufficient-data',
        detail: expect.stringContaining('too little current traffic'),
      });
      expect(later.tick).toBeGreaterThan(paused.tick + 3);

      // Every assessment after the decision judged only whole minutes from it on: nothing at all here.
      const { rows } = await h.pool.query<{
        result: {
          window: { currentFrom: string; currentTo: string };
          assessment: { health: { window: { requests: number } }; totalRefusal: { totalRefusal: boolean } };
        };
      }>('SELECT result FROM assessments WHERE site = $1 AND assessed_at > $2 ORDER BY tick', [
        site,
        new Date(decidedAt),
      ]);
      expect(rows.length).toBeGreaterThan(3);
      for (const { result } of rows) {
        // Inside the decision's minute the window is empty (from = to); after it, it starts at the gate.
        const from = Date.parse(result.window.currentFrom);
        expect(from === Date.parse(result.window.currentTo) || from >= gate).toBe(true);
        expect(result.assessment.health.window.requests).toBe(0);
        expect(result.assessment.totalRefusal.totalRefusal).toBe(false);
      }
      await handle.terminate('test done');
    });
    await connection.close();

    // Nothing after the resume paused the site: the audit ends with the resume's controls, and the only
    // resisting notice is the one before it.
    const audit = await controlAudit(h.pool, site);
    const resumeRow = audit.findIndex((r) => r.decisionKey !== null && r.newControls.paused === false);
    expect(resumeRow).toBeGreaterThan(0);
    expect(audit.slice(resumeRow + 1).filter((r) => r.newControls.paused)).toEqual([]);
    const kinds = (await listNotifications(h.pool, site)).map((n) => n.kind);
    expect(kinds.filter((k) => k === 'resisting')).toHaveLength(1);
  },
  240_000,
);
