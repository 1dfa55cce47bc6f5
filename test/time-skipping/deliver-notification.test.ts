/**
 * The delivery workflow of one notification, on skipped time: a webhook that never recovers is given up
 * after a day of retries with backoff (and the outbox row is marked failed); one that is down for hours
 * and then recovers is still delivered. The real workflow code, with stub activities typed from the
 * real ones.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Activities } from '../../activities';
import { deliveryWorkflowId } from '../../core/control/keys';
import { DELIVER_NOTIFICATION_WORKFLOW, type DeliveryReport, LoopErrors } from '../../loop/messages';
import { DAY, HOUR, createStubWorker, reportWallTime, serverClock, startTimeSkipping } from '../kit/time-skipping';

type DeliveryActivities = Pick<Activities, 'deliverNotification' | 'markNotificationFailed'>;

reportWallTime('deliver-notification.test.ts');

// A test server per test: a failed test's retries (with no worker left) would hold the next one's clock.
let testEnv: TestWorkflowEnvironment;
beforeEach(async () => {
  testEnv = await startTimeSkipping();
});
afterEach(async () => {
  await testEnv?.teardown();
});

/** Delivery stubs whose webhook answers 503 until `downUntil` (server time; Infinity: never recovers). */
function webhook(downUntil: number) {
  const now = serverClock(testEnv);
  const attempts: number[] = [];
  const marked: Array<{ notificationKey: string; error: string }> = [];
  const activities: DeliveryActivities = {
    async deliverNotification(input) {
      const at = await now();
      attempts.push(at);
      // Like the real activity: a transient channel failure fails the attempt (retryable). Benign: the
      // failure this test is about, so the worker logs it at DEBUG instead of ~300 warnings.
      if (at < downUntil)
        throw ApplicationFailure.create({
          message: 'webhook: HTTP 503 Service Unavailable',
          category: ApplicationFailureCategory.BENIGN,
        });
      return { notificationKey: input.notificationKey, delivered: ['log', 'webhook'], failed: [] };
    },
    markNotificationFailed(input) {
      marked.push(input);
      return Promise.resolve();
    },
  };
  return { activities, attempts, marked };
}

test(
  'a webhook that never recovers: ' + 'retried with backoff for 24 h, then given up, the outbox row marked failed',
  async () => {
    const hook = webhook(Infinity);
    const { worker, taskQueue } = await createStubWorker(testEnv, hook.activities);
    const key = 'shop.example.com/chain-1/3/notify-resisting';
    const startedAt = await testEnv.currentTimeMs();

    const handle = await testEnv.client.workflow.start(DELIVER_NOTIFICATION_WORKFLOW, {
      workflowId: deliveryWorkflowId(key),
      taskQueue,
      args: [{ notificationKey: key }],
    });
    const outcome = await worker.runUntil(
      handle.result().then(
        (report: DeliveryReport) => ({ report }),
        (err: unknown) => ({ err }),
      ),
    );
    // The server's close time (the environment's clock may skip on past the end to timers left behind).
    const gaveUpAt = (await handle.describe()).closeTime!.getTime();

    // The workflow fails with the contract's error type, naming the notification.
    expect('err' in outcome).toBe(true);
    const err = (outcome as { err: unknown }).err;
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(LoopErrors.NotificationNotDelivered);
    expect((cause as ApplicationFailure).nonRetryable).toBe(true);

    // Given up at the deadline: attempts until the last 5-minute backoff before the day is over, none
    // after it (the server gives up once the next attempt would not start within the day).
    const lastAttempt = Math.max(...hook.attempts);
    expect(lastAttempt - startedAt).toBeGreaterThanOrEqual(DAY - 5 * 60_000 - 2_000);
    expect(lastAttempt - startedAt).toBeLessThan(DAY);
    expect(gaveUpAt).toBeGreaterThanOrEqual(lastAttempt);
    expect(gaveUpAt - startedAt).toBeLessThan(DAY + 60_000);

    // Backoff 1 s ×2 up to 5 min: the first gaps double, then attempts every 5 minutes until the day is over.
    const gaps = hook.attempts.slice(1).map((t, i) => t - hook.attempts[i]!);
    const doubling = [1, 2, 4, 8, 16, 32, 64, 128, 256].map((s) => s * 1000);
    doubling.forEach((expected, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(expected);
      expect(gaps[i]).toBeLessThan(expected + 2_000);
    });
    for (const gap of gaps.slice(doubling.length)) {
      expect(gap).toBeGreaterThanOrEqual(5 * 60_000);
      expect(gap).toBeLessThan(5 * 60_000 + 2_000);
    }
    // 10 attempts in the first 511 s, then one every 300 s for the rest of the day.
    expect(hook.attempts.length).toBeGreaterThanOrEqual(10 + Math.floor((DAY - 511_000) / 302_000));
    expect(hook.attempts.length).toBeLessThanOrEqual(10 + Math.ceil((DAY - 511_000) / 300_000));

    // The outbox row is marked failed once, with the webhook's last answer; the workflow reports the same.
    expect(hook.marked).toEqual([{ notificationKey: key, error: 'webhook: HTTP 503 Service Unavailable' }]);
    expect(cause!.message).toBe(`notification ${key} not delivered: webhook: HTTP 503 Service Unavailable`);
  },
);

test(
  'a webhook down for 10 hours: the delivery keeps retrying and succeeds when it is back (the deadline is a day, ' +
    'not a number of attempts)',
  async () => {
    const startedAt = await testEnv.currentTimeMs();
    const hook = webhook(startedAt + 10 * HOUR);
    const { worker, taskQueue } = await createStubWorker(testEnv, hook.activities);
    const key = 'shop.example.com/chain-2/7/notify-reminder';

    const report = await worker.runUntil(
      testEnv.client.workflow.execute(DELIVER_NOTIFICATION_WORKFLOW, {
        workflowId: deliveryWorkflowId(key),
        taskQueue,
        args: [{ notificationKey: key }],
      }),
    );
    const deliveredAt = Math.max(...hook.attempts);

    expect(report).toEqual({ notificationKey: key, delivered: ['log', 'webhook'], failed: [] });
    expect(hook.marked).toEqual([]);
    expect(deliveredAt - startedAt).toBeGreaterThanOrEqual(10 * HOUR);
    // The next attempt after the webhook came back: within one 5-minute backoff interval.
    expect(deliveredAt - startedAt).toBeLessThan(10 * HOUR + 5 * 60_000 + 2_000);
    expect(hook.attempts.filter((t) => t >= startedAt + 10 * HOUR)).toHaveLength(1);
  },
);
