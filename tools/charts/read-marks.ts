/**
 * Reads what a chart marks over [from, to): the people's decisions, the notifications, and the control changes
 * (with the change before `from`, whose band the period opens in). Stored JSON is checked with zod: controls
 * and notification payloads were written by every version of the loop, and a chart must not draw what it
 * cannot read as something it is not.
 */
import { z } from 'zod';
import { controlsSchema } from '../../core/control/controls';
import type { Pool } from '../../server/db/pool';
import type { AuditChange, DecisionRow, NotificationRow } from './mark-labels';
import type { BandChange } from './types';

/** Controls as stored: the record and its version (the version is not needed here). */
const storedControls = controlsSchema().extend({ version: z.number().int().optional() });

const auditRow = z.object({
  t: z.date(),
  actor: z.string(),
  reason: z.string(),
  old_controls: storedControls.nullable(),
  new_controls: storedControls,
  decision_key: z.string().nullable(),
  before: z.boolean(),
});

/** The parts of a notification's evidence a label uses; anything else in the payload is not read. */
const notificationRow = z.object({
  t: z.date(),
  kind: z.string(),
  severity: z.string(),
  title: z.string().nullable(),
  parser_health: z.number().nullable().catch(null),
  suspects: z
    .array(z.object({ dimension: z.string(), value: z.string() }))
    .nullable()
    .catch(null),
});

/** A stored row read through its schema; one that does not fit names its table (a bug or a damaged row). */
function storedRow<S extends z.ZodType>(schema: S, raw: unknown, where: string): z.output<S> {
  const r = schema.safeParse(raw);
  if (!r.success) throw new Error(`${where}: a stored row does not read as expected: ${z.prettifyError(r.error)}`);
  return r.data;
}

export interface AuditRead {
  /** The band the period opens in: the last change before `from`, or null when none was recorded. */
  opening: BandChange | null;
  /** The changes in [from, to), in time order. */
  changes: AuditChange[];
}

export async function readAudit(pool: Pool, site: string, from: number, to: number): Promise<AuditRead> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `(SELECT changed_at AS t, actor, reason, old_controls, new_controls, decision_key, true AS before
        FROM control_audit WHERE site = $1 AND changed_at < $2 ORDER BY changed_at DESC, id DESC LIMIT 1)
     UNION ALL
     (SELECT changed_at AS t, actor, reason, old_controls, new_controls, decision_key, false AS before
        FROM control_audit WHERE site = $1 AND changed_at >= $2 AND changed_at < $3 ORDER BY changed_at, id)`,
    [site, new Date(from), new Date(to)],
  );
  let opening: BandChange | null = null;
  const changes: AuditChange[] = [];
  for (const raw of rows) {
    const r = storedRow(auditRow, raw, `control_audit of ${site}`);
    if (r.before) opening = { t: r.t.getTime(), band: r.new_controls.band };
    else
      changes.push({
        t: r.t.getTime(),
        actor: r.actor,
        reason: r.reason,
        oldControls: r.old_controls,
        newControls: r.new_controls,
        decisionKey: r.decision_key,
      });
  }
  return { opening, changes };
}

export async function readDecisions(pool: Pool, site: string, from: number, to: number): Promise<DecisionRow[]> {
  const { rows } = await pool.query<{ t: Date; kind: string; who: string; why: string }>(
    `SELECT decided_at AS t, kind, who, why FROM decisions WHERE site = $1 AND decided_at >= $2 AND decided_at ` +
      `< $3 ORDER BY decided_at`,
    [site, new Date(from), new Date(to)],
  );
  return rows.map((r) => ({ t: r.t.getTime(), kind: r.kind, who: r.who, why: r.why }));
}

/** Notifications, with the title and the evidence a label names (parser health, the suspect routes). */
export async function readNotifications(
  pool: Pool,
  site: string,
  from: number,
  to: number,
): Promise<NotificationRow[]> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `SELECT created_at AS t, kind, severity, payload->>'title' AS title,
            payload #> '{evidence,parserHealth}' AS parser_health,
            payload #> '{evidence,routes,suspects}' AS suspects
       FROM notifications
      WHERE site = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at`,
    [site, new Date(from), new Date(to)],
  );
  return rows.map((raw) => {
    const r = storedRow(notificationRow, raw, `notifications of ${site}`);
    return {
      t: r.t.getTime(),
      kind: r.kind,
      severity: r.severity,
      title: r.title,
      parserHealth: r.parser_health,
      suspects: r.suspects ?? [],
    };
  });
}
