/**
 * Delivers one queued notification (an outbox row) to every configured channel: the structured log
 * always, webhooks when configured. Started by the site loop as a detached child (parent-close policy
 * ABANDON) with the notification key in its id, so:
 * - a webhook that is down retries here, on its own schedule, and never delays a tick;
 * - the loop may continue-as-new or stop while a delivery is still retrying;
 * - each notification has one delivery run (the id is rejected if reused), visible in the UI.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { type DeliverNotificationInput, type DeliveryReport, LoopErrors } from '../loop/messages';

/** Give up after a day: by then a person has seen the loop's state anyway, and the row says so. */
const GIVE_UP_AFTER = '24 hours';

const { deliverNotification: deliver } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: GIVE_UP_AFTER,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    nonRetryableErrorTypes: [LoopErrors.NotificationNotFound],
  },
});

const { markNotificationFailed } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function deliverNotification(input: DeliverNotificationInput): Promise<DeliveryReport> {
  try {
    return await deliver.executeWithOptions({ summary: `deliver ${input.notificationKey}`.slice(0, 200) }, [input]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = err.cause?.message ?? err.message;
    await markNotificationFailed.executeWithOptions({ summary: 'record the failed delivery' }, [
      { notificationKey: input.notificationKey, error: reason },
    ]);
    throw ApplicationFailure.nonRetryable(
      `notification ${input.notificationKey} not delivered: ${reason}`,
      LoopErrors.NotificationNotDelivered,
    );
  }
}
