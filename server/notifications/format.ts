/**
 * Notification bodies per channel. The generic webhook gets the payload as is (JSON); Slack-compatible
 * webhooks (Slack, Mattermost, Rocket.Chat, Teams' Slack mode) get `text` with mrkdwn, which every one of
 * them renders, plus the site and severity up front so a phone notification says what happened.
 */
import { bandCause, bandLabel } from '../../core/control/band-wording';
import type { NotificationPayload } from './types';

const ICON: Record<NotificationPayload['severity'], string> = {
  info: ':information_source:',
  warning: ':warning:',
  critical: ':rotating_light:',
};

/** Slack mrkdwn needs &, < and > escaped in free text (they delimit links). */
function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The links: the console first (the evidence and the Decide button), the review when an incident opened or
 * ended, then the loop in Temporal.
 */
function links(p: NotificationPayload): string {
  const out: string[] = [];
  if (p.consoleLink) out.push(`<${p.consoleLink}|Open ${escapeMrkdwn(p.site)} in the console>`);
  if (p.reviewLink) out.push(`<${p.reviewLink}|Review the incident>`);
  out.push(`<${p.link}|the loop in the Temporal UI>`);
  return out.join(' · ');
}

export function slackBody(p: NotificationPayload): { text: string } {
  const who = p.recipient ? ` (for ${escapeMrkdwn(p.recipient)})` : '';
  const history = p.evidence.recentHistory
    .slice(-5)
    .map(
      (t) =>
        `${t.tick}: ${t.score ?? '—'}/${t.smoothedScore ?? '—'} ${bandLabel(t.band, bandCause(t.band, t.reasons))}`,
    )
    .join(' · ');
  const lines = [
    `${ICON[p.severity]} *${escapeMrkdwn(p.title)}*${who}`,
    escapeMrkdwn(p.text),
    history ? `Recent ticks (score/smoothed band): ${escapeMrkdwn(history)}` : '',
    p.evidence.canaries.length > 0
      ? `Canaries:\n${p.evidence.canaries.map((c) => `• ${escapeMrkdwn(c)}`).join('\n')}`
      : '',
    links(p),
  ];
  return { text: lines.filter((l) => l !== '').join('\n') };
}

/** One line for the structured log's message; the payload goes alongside as fields. */
export function logLine(p: NotificationPayload): string {
  return `[${p.severity}] ${p.title}`;
}
