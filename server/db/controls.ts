/**
 * `site_controls` (what the crawler obeys) and `control_audit` (every change, old → new). Writes happen
 * inside the action activity's transaction, guarded by the action's idempotency key: a retried action
 * finds its audit row and changes nothing again.
 */
import type pg from 'pg';
import type { Controls } from '../../core/control/controls';
import type { Pool } from './pool';
import { storableJson, wellFormed } from '@target-health/crawler/events/well-formed';

type Queryable = Pick<pg.PoolClient, 'query'> | Pool;

export interface SiteControlsRecord extends Controls {
  site: string;
  routeDiagnosis: unknown;
  workflowId: string;
  assessmentKey: string | null;
  version: number;
  updatedBy: string;
  updatedAt: Date;
}

interface ControlsRow {
  site: string;
  concurrency_limit: number;
  revisit_multiplier: number;
  paused: boolean;
  canary_only: boolean;
  effective_cost_multiplier: number;
  band: Controls['band'];
  reason: string;
  route_diagnosis: unknown;
  workflow_id: string;
  assessment_key: string | null;
  version: string;
  updated_by: string;
  updated_at: Date;
}

function toRecord(r: ControlsRow): SiteControlsRecord {
  return {
    site: r.site,
    concurrencyLimit: r.concurrency_limit,
    revisitMultiplier: r.revisit_multiplier,
    paused: r.paused,
    canaryOnly: r.canary_only,
    effectiveCostMultiplier: r.effective_cost_multiplier,
    band: r.band,
    reason: r.reason,
    routeDiagnosis: r.route_diagnosis,
    workflowId: r.workflow_id,
    assessmentKey: r.assessment_key,
    version: Number(r.version),
    updatedBy: r.updated_by,
    updatedAt: r.updated_at,
  };
}

export function controlsOf(r: SiteControlsRecord): Controls {
  return {
    concurrencyLimit: r.concurrencyLimit,
    revisitMultiplier: r.revisitMultiplier,
    paused: r.paused,
    canaryOnly: r.canaryOnly,
    effectiveCostMultiplier: r.effectiveCostMultiplier,
    band: r.band,
    reason: r.reason,
  };
}

export async function readControls(
  db: Queryable,
  site: string,
  opts: { forUpdate?: boolean } = {},
): Promise<SiteControlsRecord | undefined> {
  const { rows } = await db.query<ControlsRow>(
    `SELECT * FROM site_controls WHERE site = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`,
    [site],
  );
  return rows[0] && toRecord(rows[0]);
}

/**
 * Several sites' records in one query (the API's controls cache: a batch of notified changes, a resync
 * after a reconnect, a stream's snapshot); `null`: every record.
 */
export async function readControlsOf(db: Queryable, sites: readonly string[] | null): Promise<SiteControlsRecord[]> {
  const { rows } =
    sites === null
      ? await db.query<ControlsRow>('SELECT * FROM site_controls ORDER BY site')
      : await db.query<ControlsRow>('SELECT * FROM site_controls WHERE site = ANY($1::text[]) ORDER BY site', [sites]);
  return rows.map(toRecord);
}

export async function auditRowExists(
  db: Queryable,
  actionKey: string,
): Promise<{ changedAt: Date; version: number | null } | undefined> {
  const { rows } = await db.query<{ changed_at: Date; version: string | null }>(
    `SELECT a.changed_at, (a.new_controls->>'version') AS version FROM control_audit a WHERE a.action_key = $1`,
    [actionKey],
  );
  const r = rows[0];
  return r && { changedAt: r.changed_at, version: r.version === null ? null : Number(r.version) };
}

export interface ControlsWrite {
  site: string;
  workflowId: string;
  actionKey: string;
  next: Controls;
  changedFields: string[];
  routeDiagnosis: unknown;
  assessmentKey: string | null;
  decisionKey: string | null;
  actor: string;
}

/** Upserts the record and appends its audit row; the caller holds the row lock (readControls forUpdate). */
export async function writeControls(
  db: Queryable,
  w: ControlsWrite,
  old: SiteControlsRecord | undefined,
): Promise<{ version: number; changedAt: Date }> {
  const c = w.next;
  const { rows } = await db.query<{ version: string; updated_at: Date }>(
    `INSERT INTO site_controls (site, concurrency_limit, revisit_multiplier, paused, canary_only,
                                effective_cost_multiplier, band, reason, route_diagnosis, workflow_id,
                                assessment_key, version, updated_by, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1, $12, now())
     ON CONFLICT (site) DO UPDATE SET
       concurrency_limit = EXCLUDED.concurrency_limit, revisit_multiplier = EXCLUDED.revisit_multiplier,
       paused = EXCLUDED.paused, canary_only = EXCLUDED.canary_only,
       effective_cost_multiplier = EXCLUDED.effective_cost_multiplier,
       band = EXCLUDED.band, reason = EXCLUDED.reason,
       route_diagnosis = COALESCE(EXCLUDED.route_diagnosis, site_controls.route_diagnosis),
       workflow_id = EXCLUDED.workflow_id, assessment_key = EXCLUDED.assessment_key,
       version = site_controls.version + 1, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING version, updated_at`,
    [
      w.site,
      c.concurrencyLimit,
      c.revisitMultiplier,
      c.paused,
      c.canaryOnly,
      c.effectiveCostMultiplier,
      c.band,
      wellFormed(c.reason),
      w.routeDiagnosis === null || w.routeDiagnosis === undefined ? null : storableJson(w.routeDiagnosis),
      w.workflowId,
      w.assessmentKey,
      w.actor,
    ],
  );
  const version = Number(rows[0]!.version);
  const oldJson = old === undefined ? null : storableJson({ ...controlsOf(old), version: old.version });
  const newJson = storableJson({ ...c, version });
  await db.query(
    `INSERT INTO control_audit (action_key, site, workflow_id, old_controls, new_controls, changed_fields,
                                assessment_key, decision_key, actor, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      w.actionKey,
      w.site,
      w.workflowId,
      oldJson,
      newJson,
      w.changedFields,
      w.assessmentKey,
      w.decisionKey,
      wellFormed(w.actor),
      wellFormed(c.reason),
    ],
  );
  return { version, changedAt: rows[0]!.updated_at };
}

export interface AuditRow {
  actionKey: string;
  oldControls: (Controls & { version: number }) | null;
  newControls: Controls & { version: number };
  changedFields: string[];
  assessmentKey: string | null;
  decisionKey: string | null;
  actor: string;
  reason: string;
  changedAt: Date;
}

interface AuditDbRow {
  action_key: string;
  old_controls: AuditRow['oldControls'];
  new_controls: AuditRow['newControls'];
  changed_fields: string[];
  assessment_key: string | null;
  decision_key: string | null;
  actor: string;
  reason: string;
  changed_at: Date;
}

const toAuditRow = (r: AuditDbRow): AuditRow => ({
  actionKey: r.action_key,
  oldControls: r.old_controls,
  newControls: r.new_controls,
  changedFields: r.changed_fields,
  assessmentKey: r.assessment_key,
  decisionKey: r.decision_key,
  actor: r.actor,
  reason: r.reason,
  changedAt: r.changed_at,
});

/** A site's audit trail, oldest first (the last `limit` rows). */
export async function controlAudit(db: Queryable, site: string, limit = 1000): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditDbRow>(
    `SELECT * FROM (SELECT * FROM control_audit WHERE site = $1 ORDER BY id DESC LIMIT $2) t ORDER BY id ASC`,
    [site, limit],
  );
  return rows.map(toAuditRow);
}

/** The audit rows one decision wrote (its change of the controls), oldest first: by the site's index. */
export async function decisionAudit(db: Queryable, site: string, decisionKey: string): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditDbRow>(
    'SELECT * FROM control_audit WHERE site = $1 AND decision_key = $2 ORDER BY id',
    [site, decisionKey],
  );
  return rows.map(toAuditRow);
}
