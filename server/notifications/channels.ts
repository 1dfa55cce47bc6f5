/**
 * The notifier's channels. The structured log is always there (a notification is never only in a
 * webhook that may be down); webhooks are added from the environment. A webhook answering 2xx has the
 * notification; 4xx other than 408/429 means it never will (bad URL, bad payload): a permanent error,
 * not retried; anything else (5xx, timeouts, refused connections) is retried by the delivery activity.
 * Notifications go to the configured URLs only: redirects are not followed (a redirect is a permanent
 * error naming where it pointed), so a receiver cannot send them, or the worker, elsewhere.
 */
import type { Logger } from '../logging/logger';
import { redactText, scrubSecrets, urlOrigin } from '../../core/common/redact';
import { logLine, slackBody } from './format';
import { type NotificationChannel, type NotificationPayload, PermanentDeliveryError } from './types';

/** A webhook that does not answer within this long is treated as down for this attempt. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export function logChannel(logger: Logger): NotificationChannel {
  return {
    name: 'log',
    send: (p) => {
      logger.info(
        {
          notification: {
            key: p.key,
            kind: p.kind,
            severity: p.severity,
            site: p.site,
            recipient: p.recipient,
            link: p.link,
            consoleLink: p.consoleLink,
            reviewLink: p.reviewLink,
            text: p.text,
            evidence: p.evidence,
          },
        },
        logLine(p),
      );
      return Promise.resolve();
    },
  };
}

/** Where a webhook URL points, without its path (Slack URLs carry a secret in the path). */
export function describeUrl(url: string): string {
  return urlOrigin(url);
}

async function post(label: string, url: string, body: unknown, headers: Record<string, string>): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      redirect: 'manual',
    });
  } catch (err) {
    const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    // Some fetch errors quote the URL: never let the webhook's secret path or token into the message.
    throw new Error(
      `${label} webhook at ${describeUrl(url)} unreachable: ${redactText(scrubSecrets(cause, secretParts(url)))}`,
    );
  }
  // Drain the body so the connection can be reused; its text helps when the answer is an error.
  const text = await response.text().catch(() => '');
  if (response.ok) return;
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get('location');
    throw new PermanentDeliveryError(
      `${label} webhook at ${describeUrl(url)} answered ${response.status}, a ` +
        `redirect${location ? ` to ${redirectOrigin(location, url)}` : ''}; redirects are not followed: set the ` +
        `webhook URL to the final address`,
    );
  }
  const message =
    `${label} webhook at ${describeUrl(url)} answered ` +
    `${response.status}${text ? `: ${redactText(scrubSecrets(text.slice(0, 200), secretParts(url)))}` : ''}`;
  if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429)
    throw new PermanentDeliveryError(message);
  throw new Error(message);
}

/** The parts of a webhook URL that may be its secret, as a receiver or an error might quote them. */
function secretParts(url: string): string[] {
  try {
    const u = new URL(url);
    return [
      url,
      u.href,
      `${u.pathname}${u.search}`,
      u.pathname,
      u.search.slice(1),
      decodeURIComponent(u.password),
      u.password,
    ].filter((p) => p !== '');
  } catch {
    return [url];
  }
}

/** Where a redirect pointed, origin only (its path may be another secret URL). */
function redirectOrigin(location: string, base: string): string {
  try {
    return urlOrigin(new URL(location, base).href);
  } catch {
    return 'an invalid URL';
  }
}

/** Generic JSON webhook: the payload as is, keyed by `Idempotency-Key` so a receiver can drop repeats. */
export function jsonWebhookChannel(url: string): NotificationChannel {
  return { name: 'webhook', send: (p: NotificationPayload) => post('JSON', url, p, { 'idempotency-key': p.key }) };
}

/** Slack-compatible incoming webhook. */
export function slackWebhookChannel(url: string): NotificationChannel {
  return { name: 'slack', send: (p: NotificationPayload) => post('Slack', url, slackBody(p), {}) };
}
