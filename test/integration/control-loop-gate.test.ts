/**
 * The human gate: decisions as updates are validated before they are accepted (a bad payload is refused
 * with a clear message and changes nothing; signals are refused the same way), a site paused by hand
 * waits through continue-as-new and a worker restart, reminders keep coming across runs, and a resume
 * with explicit settings continues the loop. Real dev server and PostgreSQL.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { AwaitingHuman } from '../../loop/search-attributes';
import { controlAudit } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import { listNotifications } from '../../server/db/notifications';
import {
  type PauseInput,
  type ResumeInput,
  type StopInput,
  pauseSignal,
  pauseUpdate,
  resumeUpdate,
  stateQuery,
  stopUpdate,
} from '../../loop/messages';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return err.cause?.message ?? err.message;
    throw err;
  }
  throw new Error('expected the update to be refused');
}

test('bad decisions are refused with a clear message and change nothing', async () => {
  const site = await prepareSite(h.pool, 'gate');
  await ingestNow(h.pool, site, { ok: 100 });
  const { worker, connection } = await createTestWorker(h);
  const auditBefore = await worker.runUntil(async () => {
    const { handle, healthy: before } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
    const audit = await controlAudit(h.pool, site);
    expect(audit).toHaveLength(1);

    expect(await refusal(handle.executeUpdate(resumeUpdate, { args: [{ who: 'alice' } as ResumeInput] }))).toBe(
      'resume: why: required: why, in a sentence (it goes into the audit trail)',
    );
    expect(
      await refusal(
        handle.executeUpdate(resumeUpdate, { args: [{ who: 'alice', why: 'x', mode: 'explicit', concurrency: 4 }] }),
      ),
    ).toBe('resume: revisitMultiplier: required with mode "explicit"');
    expect(
      await refusal(
        handle.executeUpdate(pauseUpdate, { args: [{ who: 'alice', why: 'x', reason: 'typo' } as PauseInput] }),
      ),
    ).toBe('pause: unknown field "reason"');
    expect(await refusal(handle.executeUpdate(stopUpdate, { args: ['stop it' as unknown as StopInput] }))).toBe(
      'stop: expected a JSON object like {"who": "alice@example.com", "why": "..."}',
    );
    expect(await refusal(handle.executeUpdate(resumeUpdate, { args: [{ who: 'alice', why: 'looks fine' }] }))).toBe(
      `resume: ${site} is not paused waiting for a decision (band healthy); nothing to resume`,
    );
    // A signal cannot answer: it is refused the same way, and the refusal shows in the state.
    await handle.signal(pauseSignal, { who: '', why: 'x' });
    const after = await waitForState(handle, 'the refused signal recorded', (s) => s.rejected.length > 0);
    expect(after.rejected).toEqual(['pause: who: required: who decides, e.g. "alice@example.com"']);

    expect(after.awaitingHuman).toBeNull();
    expect(after.lastDecision).toBeNull();
    expect(after.controls).toEqual(before.controls);
    await handle.terminate('test done');
    return audit;
  });
  await connection.close();
  expect(await controlAudit(h.pool, site)).toEqual(auditBefore);
  expect(await listDecisions(h.pool, site)).toEqual([]);
});

test(
  'a paused site waits through continue-as-new and a worker restart, ' + 'then resumes with explicit settings',
  async () => {
    const site = await prepareSite(h.pool, 'wait');
    await ingestNow(h.pool, site, { ok: 100 });
    const input = loopInput(site, { maxTicksPerRun: 3, policy: { reminderIntervalMs: 2_000 } });

    const first = await createTestWorker(h);
    const { handle, paused } = await first.worker.runUntil(async () => {
      const { handle } = await startHealthySite(h.client, h.taskQueue, input);
      const paused = await handle.executeUpdate(pauseUpdate, {
        args: [{ who: 'carol@example.com', why: 'legal asked us to hold' }],
      });
      expect(paused).toMatchObject({
        decision: 'pause',
        band: 'healthy',
        controls: { paused: true, canaryOnly: true },
      });
      const waiting = await waitForState(handle, 'waiting', (s) => s.awaitingHuman !== null);
      // Two more continue-as-new while waiting; the wait, its start and its reminders are carried.
      const carried = await waitForState(
        handle,
        'two runs later, with reminders',
        (s) => s.runs >= waiting.runs + 2 && (s.awaitingHuman?.remindersSent ?? 0) >= 1,
        60_000,
      );
      expect(carried.awaitingHuman).toMatchObject({
        kind: 'manual',
        pausedBy: 'carol@example.com',
        since: waiting.awaitingHuman!.since,
      });
      const described = await handle.describe();
      expect(described.runId).not.toBe(handle.firstExecutionRunId);
      expect(described.typedSearchAttributes.get(AwaitingHuman)).toBe(true);
      return { handle, paused };
    });
    await first.connection.close();

    // The worker is gone; a new one takes over the same task queue.
    const second = await createTestWorker(h);
    await second.worker.runUntil(async () => {
      const before = await handle.query(stateQuery);
      const still = await waitForState(handle, 'ticking on the new worker', (s) => s.tick >= before.tick + 2);
      expect(still.awaitingHuman).toMatchObject({ kind: 'manual', since: paused.decidedAt });
      expect(still.controls).toMatchObject({ paused: true, canaryOnly: true });

      const resumed = await handle.executeUpdate(resumeUpdate, {
        args: [
          { who: 'dave@example.com', why: 'legal cleared it', mode: 'explicit', concurrency: 4, revisitMultiplier: 3 },
        ],
      });
      expect(resumed).toMatchObject({
        decision: 'resume',
        band: 'degrading',
        controls: { concurrencyLimit: 4, revisitMultiplier: 3, paused: false, canaryOnly: false },
      });
      const going = await waitForState(
        handle,
        'ticking after the resume',
        (s) => s.tick >= still.tick + 2 && s.awaitingHuman === null,
      );
      expect(going.lastDecision).toMatchObject({ kind: 'resume', who: 'dave@example.com', via: 'update' });
      expect((await handle.describe()).typedSearchAttributes.get(AwaitingHuman)).toBe(false);
      await handle.terminate('test done');
    });
    await second.connection.close();

    const decisions = await listDecisions(h.pool, site);
    expect(decisions.map((d) => [d.kind, d.who, d.decisionKey.replace(/^.*\/decision\//, '')])).toEqual([
      ['pause', 'carol@example.com', '1'],
      ['resume', 'dave@example.com', '2'],
    ]);
    expect(decisions[1]!.awaitingSince?.toISOString()).toBe(paused.decidedAt);
    expect(decisions[1]!.mode).toEqual({ mode: 'explicit', concurrency: 4, revisitMultiplier: 3 });
    // Reminders: one notification per reminder, each kept once, across runs.
    const notes = await eventually(async () => {
      const n = await listNotifications(h.pool, site);
      return n.some((x) => x.kind === 'resumed') ? n : undefined;
    }, 'the resume notification');
    const kinds = notes.map((n) => n.kind);
    expect(kinds[0]).toBe('paused');
    expect(kinds[kinds.length - 1]).toBe('resumed');
    expect(kinds.filter((k) => k === 'reminder').length).toBeGreaterThanOrEqual(1);
    expect(new Set(notes.map((n) => n.notificationKey)).size).toBe(notes.length);
  },
);
