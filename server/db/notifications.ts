/**
 * The notifications outbox. A notification is queued in the same transaction as the action that raised
 * it, then delivered channel by channel; each channel that took it gets a row, so a retry only goes to
 * the channels that have not.
 */
import type pg from 'pg';
import type { Pool } from './pool';
import { storableJson } from '@target-health/crawler/events/well-formed';
import { ALERT_KINDS, type AlertKind } from '../../core/control/alerts';

type Queryable = Pick<pg.PoolClient, 'query'> | Pool;

export interface OutboxRow {
  notificationKey: string;
  site: string;
  kind: string;
  severity: 'info' | 'warning' | 'critical';
  recipient: string | null;
  payload: unknown;
}

export interface StoredNotification extends OutboxRow {
  createdAt: Date;
  attempts: number;
  lastError: string | null;
  deliveredAt: Date | null;
  failedAt: Date | null;
  /** Channels that have taken it (or rejected it for good), by name. */
  channels: Record<string, 'delivered' | 'rejected'>;
}

export async function enqueueNotification(db: Queryable, n: OutboxRow): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO notifications (notification_key, site, kind, severity, recipient, payload)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (notification_key) DO NOTHING`,
    [n.notificationKey, n.site, n.kind, n.severity, n.recipient, storableJson(n.payload)],
  );
  return r.rowCount === 1;
}

interface Row {
  notification_key: string;
  site: string;
  kind: string;
  severity: OutboxRow['severity'];
  recipient: string | null;
  payload: unknown;
  created_at: Date;
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  channels: Record<string, 'delivered' | 'rejected'> | null;
}

const SELECT = `SELECT n.*, (SELECT jsonb_object_agg(d.channel, d.outcome) FROM notification_deliveries d
                             WHERE d.notification_key = n.notification_key) AS channels
  FROM notifications n`;

function toStored(r: Row): StoredNotification {
  return {
    notificationKey: r.notification_key,
    site: r.site,
    kind: r.kind,
    severity: r.severity,
    recipient: r.recipient,
    payload: r.payload,
    createdAt: r.created_at,
    attempts: r.attempts,
    lastError: r.last_error,
    deliveredAt: r.delivered_at,
    failedAt: r.failed_at,
    channels: r.channels ?? {},
  };
}

export async function findNotification(db: Queryable, key: string): Promise<StoredNotification | undefined> {
  const { rows } = await db.query<Row>(`${SELECT} WHERE n.notification_key = $1`, [key]);
  return rows[0] && toStored(rows[0]);
}

export async function listNotifications(db: Queryable, site: string): Promise<StoredNotification[]> {
  const { rows } = await db.query<Row>(`${SELECT} WHERE n.site = $1 ORDER BY n.created_at, n.notification_key`, [site]);
  return rows.map(toStored);
}

export async function recordChannelOutcome(
  db: Queryable,
  key: string,
  channel: string,
  outcome: 'delivered' | 'rejected',
  detail: string | null,
): Promise<void> {
  await db.query(
    `INSERT INTO notification_deliveries (notification_key, channel, outcome, detail) VALUES ($1, $2, $3, $4)
     ON CONFLICT (notification_key, channel) DO NOTHING`,
    [key, channel, outcome, detail],
  );
}

export async function recordAttempt(db: Queryable, key: string, error: string | null, done: boolean): Promise<void> {
  await db.query(
    `UPDATE notifications SET attempts = attempts + 1, last_error = $2,
                              delivered_at = CASE WHEN $3 THEN COALESCE(delivered_at, now()) ELSE delivered_at END
     WHERE notification_key = $1`,
    [key, error, done],
  );
}

export async function markNotificationFailed(db: Queryable, key: string, error: string): Promise<void> {
  await db.query(
    'UPDATE notifications SET failed_at = COALESCE(failed_at, now()), last_error = $2 WHERE notification_key = $1',
    [key, error],
  );
}

export interface StoredAlert {
  /** When the loop raised it (the notification's time: written in the tick's own transaction). */
  at: Date;
  kind: AlertKind;
  severity: OutboxRow['severity'];
  /** The notification's title as stored (`shop.example.com: route problem — pool=dc-3 …`), or null. */
  title: string | null;
}

/** A site's route and parser alerts raised in [from, to), oldest first (the `(site, created_at)` index). */
export async function alertsBetween(db: Queryable, site: string, from: Date, to: Date): Promise<StoredAlert[]> {
  const { rows } = await db.query<{
    at: Date;
    kind: StoredAlert['kind'];
    severity: OutboxRow['severity'];
    title: string | null;
  }>(
    `SELECT created_at AS at, kind, severity, payload->>'title' AS title FROM notifications
      WHERE site = $1 AND created_at >= $2 AND created_at < $3 AND kind = ANY($4::text[])
      ORDER BY created_at, notification_key`,
    [site, from, to, [...ALERT_KINDS]],
  );
  return rows.map((r) => ({ at: r.at, kind: r.kind, severity: r.severity, title: r.title }));
}
