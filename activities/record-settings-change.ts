/**
 * The live-reconfiguration activity: in one transaction, set the site's owners (when the change names
 * them) and append the `settings_changes` audit row — who, why, every field old → new. Keyed by the
 * change's idempotency key (site/chain/settings/n): a retry finds the row and answers with it, so a change
 * is recorded once and reported the same way to every attempt. A change that changes nothing (the loop
 * had these settings, the site these owners) writes nothing.
 */
import type { Pool } from '../server/db/pool';
import { findSettingsChange, recordSettingsChangeOnce } from '../server/db/settings-changes';
import { lockSiteOwners, setSiteOwners } from '../server/db/sites';
import type { Logger } from '../server/logging/logger';
import type { SiteHealthConfig } from '../core/control/config';
import type { SettingChange } from '../core/control/settings-change';

export interface RecordSettingsChangeInput {
  site: string;
  workflowId: string;
  chainId: string;
  /** Idempotency key: `site/chain/settings/n`. */
  changeKey: string;
  who: string;
  why: string | null;
  /** The settings fields that change (the owners' changes are found here, under the row lock). */
  changes: SettingChange[];
  /** The loop's whole settings after the change. */
  settings: SiteHealthConfig;
  owners: { owner?: string; parserOwner?: string };
}

export interface RecordSettingsChangeResult {
  /** Database time of the audit row, or null when nothing changed. */
  changedAt: string | null;
  /** Every field that changed: settings, then owners. */
  changes: SettingChange[];
}

export function makeRecordSettingsChange(deps: { pool: Pool; logger: Logger }) {
  return async function recordSettingsChange(input: RecordSettingsChangeInput): Promise<RecordSettingsChangeResult> {
    const client = await deps.pool.connect();
    try {
      await client.query('BEGIN');
      const done = await findSettingsChange(client, input.changeKey);
      if (done) {
        await client.query('COMMIT');
        deps.logger.info(
          { site: input.site, changeKey: input.changeKey },
          'settings change already recorded (activity retried)',
        );
        return { changedAt: done.changedAt.toISOString(), changes: done.changes };
      }
      const ownerChanges: SettingChange[] = [];
      if (input.owners.owner !== undefined || input.owners.parserOwner !== undefined) {
        const old = await lockSiteOwners(client, input.site);
        for (const field of ['owner', 'parserOwner'] as const) {
          const next = input.owners[field];
          if (next !== undefined && next !== old[field]) ownerChanges.push({ field, old: old[field], new: next });
        }
        if (ownerChanges.length > 0) await setSiteOwners(client, input.site, input.owners);
      }
      const changes = [...input.changes, ...ownerChanges];
      if (changes.length === 0) {
        await client.query('COMMIT');
        return { changedAt: null, changes: [] };
      }
      const row = await recordSettingsChangeOnce(client, {
        changeKey: input.changeKey,
        site: input.site,
        workflowId: input.workflowId,
        chainId: input.chainId,
        who: input.who,
        why: input.why,
        changes,
        settings: input.settings,
      });
      await client.query('COMMIT');
      deps.logger.info(
        { site: input.site, changeKey: input.changeKey, who: input.who, changes: row.changes },
        'loop settings changed',
      );
      return { changedAt: row.changedAt.toISOString(), changes: row.changes };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  };
}
