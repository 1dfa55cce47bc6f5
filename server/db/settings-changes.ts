/**
 * The audit of live reconfigurations (`settings_changes`): one row per settings change that changed
 * something, written with the owners it set in one transaction by the `recordSettingsChange` activity.
 */
import type pg from 'pg';
import { storableJson } from '@target-health/crawler/events/well-formed';
import type { SettingChange } from '../../core/control/settings-change';
import type { Pool } from './pool';

type Queryable = Pick<pg.PoolClient, 'query'> | Pool;

export interface SettingsChangeRow {
  changeKey: string;
  site: string;
  workflowId: string;
  chainId: string;
  who: string;
  why: string | null;
  changes: SettingChange[];
  settings: unknown;
}

export interface StoredSettingsChange extends SettingsChangeRow {
  changedAt: Date;
}

interface Row {
  change_key: string;
  site: string;
  workflow_id: string;
  chain_id: string;
  who: string;
  why: string | null;
  changes: SettingChange[];
  settings: unknown;
  changed_at: Date;
}

const fromRow = (r: Row): StoredSettingsChange => ({
  changeKey: r.change_key,
  site: r.site,
  workflowId: r.workflow_id,
  chainId: r.chain_id,
  who: r.who,
  why: r.why,
  changes: r.changes,
  settings: r.settings,
  changedAt: r.changed_at,
});

export async function findSettingsChange(db: Queryable, changeKey: string): Promise<StoredSettingsChange | undefined> {
  const { rows } = await db.query<Row>('SELECT * FROM settings_changes WHERE change_key = $1', [changeKey]);
  return rows[0] && fromRow(rows[0]);
}

/** Inserts the row unless its key is stored already; returns the stored row (the first attempt's). */
export async function recordSettingsChangeOnce(db: Queryable, c: SettingsChangeRow): Promise<StoredSettingsChange> {
  await db.query(
    `INSERT INTO settings_changes (change_key, site, workflow_id, chain_id, who, why, changes, settings)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (change_key) DO NOTHING`,
    [c.changeKey, c.site, c.workflowId, c.chainId, c.who, c.why, storableJson(c.changes), storableJson(c.settings)],
  );
  return (await findSettingsChange(db, c.changeKey))!;
}

/** A site's settings changes, oldest first. */
export async function listSettingsChanges(db: Queryable, site: string): Promise<StoredSettingsChange[]> {
  const { rows } = await db.query<Row>(
    'SELECT * FROM settings_changes WHERE site = $1 ORDER BY changed_at, change_key',
    [site],
  );
  return rows.map(fromRow);
}
