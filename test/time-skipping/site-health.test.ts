/**
 * The per-site loop on skipped time, for what real-time tests cannot reach: a resisting site paused
 * and waiting days for a person, reminded every few hours, then resumed; and the same wait carried
 * through many continue-as-new runs. The real workflow code (the worker bundle) with stub activities
 * typed from the real ones (test/kit/stub-loop-activities.ts).
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AssessSiteInput } from '../../activities';
import { workflowIdForSite } from '../../core/common/names';
import {
  SITE_HEALTH_WORKFLOW,
  type SiteHealthInput,
  type SiteHealthSummary,
  resumeUpdate,
  stateQuery,
  stopSignal,
} from '../../loop/messages';
import { healthyTraffic, loopStubs, noticesOf, resistingTraffic } from '../kit/stub-loop-activities';
import { DAY, HOUR, createStubWorker, reportWallTime, startTimeSkipping } from '../kit/time-skipping';

reportWallTime('site-health.test.ts');

// A test server per test: time skipping is global to a server, and a failed test's loop (still due
// to tick, with no worker left) would otherwise hold the next test's clock.
let testEnv: TestWorkflowEnvironment;
beforeEach(async () => {
  testEnv = await startTimeSkipping();
});
afterEach(async () => {
  await testEnv?.teardown();
});

/** Healthy for two ticks, resisting from the third until a person resumes the site, healthy after. */
const resistsFromTick3 = (input: AssessSiteInput) =>
  input.evidenceSince === null && input.tick >= 3 ? resistingTraffic() : healthyTraffic();

/** Hourly ticks, the product's 4-hour reminder interval. */
function hourlyLoop(site: string, overrides: Partial<SiteHealthInput> = {}): SiteHealthInput {
  return { site, tickIntervalMs: HOUR, policy: { reminderIntervalMs: 4 * HOUR }, ...overrides };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Ticks fall on the tick interval's grid (core/control/schedule.ts): the first at once, the next on the
 * hour. Starting on the hour makes them 0, 1, 2 h after the start, as the comments below count them.
 */
async function waitForTheHour(): Promise<void> {
  const now = await testEnv.currentTimeMs();
  await testEnv.sleep(HOUR - (now % HOUR));
}

/** Consecutive differences. */
const gaps = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - times[i]!);

test(
  'a resisting site waits three days for a person: ' + 'reminded every 4 hours, never acting alone, then resumed',
  async () => {
    const site = 'reminders.example.com';
    const stubs = loopStubs(testEnv, site, resistsFromTick3);
    const { worker, taskQueue } = await createStubWorker(testEnv, stubs.activities);

    await worker.runUntil(async () => {
      await waitForTheHour();
      const handle = await testEnv.client.workflow.start(SITE_HEALTH_WORKFLOW, {
        workflowId: workflowIdForSite(site),
        taskQueue,
        args: [hourlyLoop(site)],
      });

      // Ticks at 0, 1 and 2 h (half an hour more, so no tick is due at the moment time stops).
      await testEnv.sleep(2.5 * HOUR);
      const paused = await handle.query(stateQuery);
      const pausedAt = stubs.assessed[2]!.at;
      expect(paused).toMatchObject({
        tick: 3,
        band: 'resisting',
        controls: { paused: true, canaryOnly: true },
        awaitingHuman: { kind: 'resisting', since: iso(pausedAt), remindersSent: 0 },
      });
      expect(noticesOf(stubs.applied, 'resisting')).toHaveLength(1);

      // Three days without an answer: 72 more hourly ticks.
      await testEnv.sleep(3 * DAY);
      const waiting = await handle.query(stateQuery);
      expect(waiting).toMatchObject({
        tick: 75,
        band: 'resisting',
        controls: { paused: true, canaryOnly: true },
        lastDecision: null,
      });
      expect(waiting.awaitingHuman).toMatchObject({ kind: 'resisting', since: iso(pausedAt), remindersSent: 18 });

      // A reminder every 4 hours of the wait (on the first hourly tick at least 4 h after the last
      // notice), numbered, each naming when the wait began, each handed to its own delivery.
      const reminders = noticesOf(stubs.applied, 'reminder');
      expect(reminders).toHaveLength(18);
      reminders.forEach((r, i) =>
        expect(r.title).toBe(
          `Reminder ${i + 1}: ${site} is paused (since ${iso(pausedAt)}) and waiting for your decision`,
        ),
      );
      for (const gap of gaps([pausedAt, ...reminders.map((r) => r.at)])) {
        expect(gap).toBeGreaterThanOrEqual(4 * HOUR);
        expect(gap).toBeLessThan(4 * HOUR + 60_000);
      }
      expect(stubs.delivered).toEqual(expect.arrayContaining(reminders.map((r) => r.key)));
      // Never acting alone: after the pause, no tick changed the controls.
      const pauseCall = stubs.applied.findIndex((c) => c.input.notices.some((n) => n.draft.kind === 'resisting'));
      expect(stubs.applied[pauseCall]!.input.controls?.next).toMatchObject({ paused: true });
      expect(stubs.applied.slice(pauseCall + 1).every((c) => c.input.controls === null)).toBe(true);
      expect(stubs.controls()).toMatchObject({ paused: true, canaryOnly: true, band: 'resisting' });

      // A person resumes it, cautiously, three days after the pause.
      const result = await handle.executeUpdate(resumeUpdate, {
        args: [{ who: 'ops@example.com', why: 'the owner lifted the block', mode: 'cautious' }],
      });
      expect(result).toMatchObject({
        decision: 'resume',
        band: 'degrading',
        controls: { paused: false, canaryOnly: false, concurrencyLimit: 8, revisitMultiplier: 2 },
      });
      const decision = stubs.applied.find((c) => c.input.decision !== null)!;
      expect(decision.input.decision).toMatchObject({
        kind: 'resume',
        who: 'ops@example.com',
        via: 'update',
        awaitingSince: iso(pausedAt),
      });
      expect(decision.at - pausedAt).toBeGreaterThanOrEqual(3 * DAY);
      expect(stubs.controls()).toMatchObject({ paused: false, canaryOnly: false, concurrencyLimit: 8 });

      // The site is judged afresh on traffic since the decision (healthy): no more waiting, no more
      // reminders. (The decision came at half past; 4¼ h more stops the clock between two ticks.)
      await testEnv.sleep(4.25 * HOUR);
      const resumed = await handle.query(stateQuery);
      expect(resumed.awaitingHuman).toBeNull();
      expect(resumed.band).not.toBe('resisting');
      expect(
        stubs.assessed.filter((a) => a.at > decision.at).every((a) => a.input.evidenceSince === result.decidedAt),
      ).toBe(true);
      expect(noticesOf(stubs.applied, 'reminder')).toHaveLength(18);

      await handle.signal(stopSignal, { who: 'ops@example.com', why: 'test over' });
      const summary: SiteHealthSummary = await handle.result();
      expect(summary).toMatchObject({
        outcome: 'stopped',
        stoppedBy: 'ops@example.com',
        runs: 1,
        decisions: 2,
        ticks: 79,
      });
    });
  },
);

/**
 * 8 ticks a run: run k's last tick falls 8k − 1 hours after the start, never 2 h after a multiple of 4
 * (when reminders are due), so no reminder is sent by a run's last tick. The Java test server freezes its clock when a
 * detached child (the reminder's delivery) completes after its parent run has continued as new: it
 * locks time skipping to notify the parent and, the parent run being closed, never unlocks it. A real
 * server just drops that notification.
 */
test(
  'continue-as-new every 8 ticks for two days with a pending human wait: the wait, its start and its reminders ' +
    'carry over; a decision after it works',
  async () => {
    const site = 'continued.example.com';
    const stubs = loopStubs(testEnv, site, resistsFromTick3);
    const { worker, taskQueue } = await createStubWorker(testEnv, stubs.activities);

    await worker.runUntil(async () => {
      await waitForTheHour();
      const handle = await testEnv.client.workflow.start(SITE_HEALTH_WORKFLOW, {
        workflowId: workflowIdForSite(site),
        taskQueue,
        args: [hourlyLoop(site, { maxTicksPerRun: 8 })],
      });
      const chainId = handle.firstExecutionRunId;

      await testEnv.sleep(2.5 * HOUR);
      const pausedAt = stubs.assessed[2]!.at;
      expect(await handle.query(stateQuery)).toMatchObject({
        tick: 3,
        runs: 1,
        band: 'resisting',
        awaitingHuman: { since: iso(pausedAt) },
      });

      await testEnv.sleep(2 * DAY);
      const waiting = await handle.query(stateQuery);
      const runs = new Set(stubs.assessed.map((a) => a.runId));
      // One tick an hour for 50 h (on the hour: a continued run waits for its slot), 8 ticks a run.
      expect(waiting.tick).toBe(51);
      expect(waiting.runs).toBe(Math.ceil(waiting.tick / 8));
      expect(waiting.runs).toBeGreaterThanOrEqual(6);
      expect(runs.size).toBe(waiting.runs);
      expect((await handle.describe()).runId).not.toBe(chainId);
      // One chain: its id and the tick numbering go on across runs (every assessment key once).
      expect(waiting.chainId).toBe(chainId);
      expect(stubs.assessed.map((a) => a.input.tick)).toEqual(Array.from({ length: waiting.tick }, (_, i) => i + 1));
      expect(new Set(stubs.assessed.map((a) => a.input.chainId))).toEqual(new Set([chainId]));

      // The wait is the one that began at tick 3, in run 1: same start, same assessment, reminders
      // counted on (not restarted) in every later run, still every 4 hours.
      expect(waiting).toMatchObject({
        band: 'resisting',
        controls: { paused: true, canaryOnly: true },
        lastDecision: null,
      });
      expect(waiting.awaitingHuman).toMatchObject({
        kind: 'resisting',
        since: iso(pausedAt),
        assessmentKey: `${site}/${chainId}/3`,
        remindersSent: 12,
      });
      const reminders = noticesOf(stubs.applied, 'reminder');
      expect(reminders.map((r) => r.title)).toEqual(
        Array.from(
          { length: 12 },
          (_, i) => `Reminder ${i + 1}: ${site} is paused (since ${iso(pausedAt)}) and waiting for your decision`,
        ),
      );
      expect(new Set(reminders.map((r) => r.runId)).size).toBeGreaterThanOrEqual(4);
      for (const gap of gaps([pausedAt, ...reminders.map((r) => r.at)])) {
        expect(gap).toBeGreaterThanOrEqual(4 * HOUR);
        expect(gap).toBeLessThan(4 * HOUR + 60_000);
      }
      expect(noticesOf(stubs.applied, 'resisting')).toHaveLength(1);

      // A decision in the latest run closes the wait that began in the first.
      const result = await handle.executeUpdate(resumeUpdate, {
        args: [
          {
            who: 'ops@example.com',
            why: 'blocked IPs were rotated out',
            mode: 'explicit',
            concurrency: 2,
            revisitMultiplier: 4,
          },
        ],
      });
      expect(result).toMatchObject({
        decision: 'resume',
        decisionKey: `${site}/${chainId}/decision/1`,
        controls: { paused: false, concurrencyLimit: 2, revisitMultiplier: 4 },
      });
      const decision = stubs.applied.find((c) => c.input.decision !== null)!;
      expect(decision.input.decision).toMatchObject({
        kind: 'resume',
        awaitingSince: iso(pausedAt),
        assessmentKey: `${site}/${chainId}/3`,
      });
      expect(decision.runId).not.toBe(chainId);
      expect(await handle.query(stateQuery)).toMatchObject({
        awaitingHuman: null,
        lastDecision: { kind: 'resume', who: 'ops@example.com' },
      });

      await handle.signal(stopSignal, { who: 'ops@example.com', why: 'test over' });
      const summary: SiteHealthSummary = await handle.result();
      expect(summary).toMatchObject({ outcome: 'stopped', runs: waiting.runs, decisions: 2 });
    });
  },
);
