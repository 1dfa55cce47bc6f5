/**
 * What a sender of signals can make a running loop keep (docs/security.md, "Limits"): refused decision
 * signals are kept for the `state` query and carried through continue-as-new, so they are bounded — the
 * latest 5, each at most 500 characters — whatever was sent (here eight signals carrying 100 KB unknown
 * keys and NUL/lone-surrogate values). The loop goes on ticking. Real dev server and PostgreSQL.
 */
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { pauseSignal, resumeSignal } from '../../loop/messages';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { createTestWorker, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

test('refused signals: the latest 5 are kept, each cut to 500 characters; the loop keeps ticking', async () => {
  const site = await prepareSite(h.pool, 'refusals');
  await ingestNow(h.pool, site, { ok: 100 });
  const { worker, connection } = await createTestWorker(h);
  await worker.runUntil(async () => {
    const { handle, healthy } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
    for (let i = 0; i < 8; i++) {
      const big = `k${i}-${'x'.repeat(100_000)}`;
      await handle.signal(i % 2 === 0 ? pauseSignal : resumeSignal, {
        who: `a\u0000b\ud800${i}`,
        why: 'y'.repeat(5_000),
        [big]: 'z'.repeat(1_000),
      });
    }
    const s = await waitForState(
      handle,
      'all eight refusals seen',
      (st) => st.rejected.some((r) => r.includes('k7-')) && st.tick > healthy.tick,
    );
    expect(s.rejected).toHaveLength(5);
    for (const message of s.rejected) {
      expect(message.length).toBeLessThanOrEqual(500);
      expect(message).toMatch(/^(pause|resume): /);
      expect(isWellFormed(message)).toBe(true);
      expect(message).not.toContain('\u0000');
    }
    // The latest five, in order: signals 3 to 7.
    expect(s.rejected.map((r) => /k(\d)-/.exec(r)?.[1])).toEqual(['3', '4', '5', '6', '7']);
    expect(s.awaitingHuman).toBeNull();
    await handle.terminate('test done');
  });
  await connection.close();
});
