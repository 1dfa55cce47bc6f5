/**
 * The pluggable notifier: a list of channels built from the settings. Delivery itself (retries, which
 * channels still need a notification) is the delivery activity's job; a channel only sends.
 */
import type { NotifierSettings } from '../config/env';
import type { Logger } from '../logging/logger';
import { jsonWebhookChannel, logChannel, slackWebhookChannel } from './channels';
import type { NotificationChannel } from './types';

export interface Notifier {
  channels: readonly NotificationChannel[];
}

export function createNotifier(
  settings: NotifierSettings,
  logger: Logger,
  extra: readonly NotificationChannel[] = [],
): Notifier {
  const channels: NotificationChannel[] = [logChannel(logger)];
  if (settings.webhookUrl) channels.push(jsonWebhookChannel(settings.webhookUrl));
  if (settings.slackWebhookUrl) channels.push(slackWebhookChannel(settings.slackWebhookUrl));
  return { channels: [...channels, ...extra] };
}
