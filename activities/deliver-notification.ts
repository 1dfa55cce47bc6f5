/**
 * Delivers one outbox notification to every channel that does not have it yet. Each channel that takes
 * it (or rejects it for good) is recorded, so a retry goes only to the channels still missing — the log
 * line is written once, a webhook that answered 2xx is not called again. Any channel failing for a
 * reason that may pass (5xx, timeout, refused connection) fails the attempt, and the delivery workflow
 * retries it with backoff; the loop that raised the notification has long moved on.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { type DeliverNotificationInput, type DeliveryReport, LoopErrors } from '../loop/messages';
import {
  findNotification,
  markNotificationFailed,
  recordAttempt,
  recordChannelOutcome,
} from '../server/db/notifications';
import type { Pool } from '../server/db/pool';
import type { Logger } from '../server/logging/logger';
import type { Notifier } from '../server/notifications/notifier';
import { type NotificationPayload, PermanentDeliveryError } from '../server/notifications/types';

export interface DeliveryDeps {
  pool: Pool;
  logger: Logger;
  notifier: Notifier;
}

export function makeDeliveryActivities(deps: DeliveryDeps) {
  return {
    async deliverNotification(input: DeliverNotificationInput): Promise<DeliveryReport> {
      const stored = await findNotification(deps.pool, input.notificationKey);
      if (!stored)
        throw ApplicationFailure.nonRetryable(
          `no notification ${input.notificationKey} in the outbox`,
          LoopErrors.NotificationNotFound,
        );
      const payload = stored.payload as NotificationPayload;
      const delivered = Object.entries(stored.channels)
        .filter(([, o]) => o === 'delivered')
        .map(([c]) => c);
      const failed = Object.entries(stored.channels)
        .filter(([, o]) => o === 'rejected')
        .map(([c]) => c);
      const transient: string[] = [];
      for (const channel of deps.notifier.channels) {
        if (stored.channels[channel.name] !== undefined) continue;
        try {
          await channel.send(payload);
          await recordChannelOutcome(deps.pool, stored.notificationKey, channel.name, 'delivered', null);
          delivered.push(channel.name);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (err instanceof PermanentDeliveryError) {
            await recordChannelOutcome(deps.pool, stored.notificationKey, channel.name, 'rejected', message);
            failed.push(channel.name);
            deps.logger.error(
              { notificationKey: stored.notificationKey, channel: channel.name, error: message },
              'notification rejected by channel; not retrying it',
            );
          } else {
            transient.push(message);
            deps.logger.warn(
              { notificationKey: stored.notificationKey, channel: channel.name, error: message },
              'notification delivery failed; will retry',
            );
          }
        }
      }
      const done = transient.length === 0;
      await recordAttempt(
        deps.pool,
        stored.notificationKey,
        done ? (failed.length > 0 ? `rejected by ${failed.join(', ')}` : null) : transient.join('; '),
        done,
      );
      // Fail the attempt so the delivery workflow retries it with backoff (only the missing channels).
      if (!done) throw new Error(transient.join('; '));
      return { notificationKey: stored.notificationKey, delivered, failed };
    },

    async markNotificationFailed(input: { notificationKey: string; error: string }): Promise<void> {
      await markNotificationFailed(deps.pool, input.notificationKey, input.error);
      deps.logger.error({ notificationKey: input.notificationKey, error: input.error }, 'notification given up');
    },
  };
}
