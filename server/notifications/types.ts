/**
 * A notification as stored in the outbox and posted to webhooks: what happened to which site, for whom,
 * in words, with the evidence, a link to the site's page in the web console and one to the loop's run in the
 * Temporal UI.
 */
import type { Audience, Evidence, NoticeKind, Severity } from '../../core/control/notices';

export interface NotificationPayload {
  /** Idempotency key (`site/chain/tick/notify-kind`); webhooks get it as the `Idempotency-Key` header. */
  key: string;
  kind: NoticeKind;
  severity: Severity;
  site: string;
  audience: Audience;
  /** The owner's contact from the site registry, or null when nobody is registered. */
  recipient: string | null;
  title: string;
  text: string;
  /** The site's loop in the Temporal UI. */
  link: string;
  /**
   * The site's page in the web console (docs/console.md): the evidence and the Decide button. Absent in
   * notifications queued before the console existed.
   */
  consoleLink?: string;
  /** The console's review of the site's latest incident, for the kinds that open or close one; else null. */
  reviewLink?: string | null;
  workflowId: string;
  evidence: Evidence;
}

/** One way out: a structured log line, a JSON webhook, a Slack-compatible webhook. */
export interface NotificationChannel {
  readonly name: string;
  send(payload: NotificationPayload): Promise<void>;
}

/** A delivery that can never succeed as sent (a 4xx answer): do not retry it. */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentDeliveryError';
  }
}
