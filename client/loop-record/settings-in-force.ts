/**
 * The settings a site's loop had at a time, for the replays that stand in for ticks it never made and for the
 * review's tuning: the `settings_changes` audit holds the loop's whole settings after every `configure`, so
 *   - the latest change at or before the time gives them;
 *   - before the first change, that change's own list of old values, applied to its settings, gives them;
 *   - with no change recorded, the running loop has had the same settings since it started;
 *   - with no loop and no change, the product defaults (said so).
 * Each answer says where it came from, in words the outputs print after "with".
 */
import type { SiteHealthConfig } from '../../core/control/config';
import { siteHealthConfigSchema } from '../../core/control/config';
import type { SettingChange } from '../../core/control/settings-change';
import type { Pool } from '../../server/db/pool';
import { listSettingsChanges, type StoredSettingsChange } from '../../server/db/settings-changes';
import type { RunningSettings } from '../running-settings';
import { replayConfig } from '../commands/replay';

export interface SettingsInForce {
  config: SiteHealthConfig;
  /** `the settings in force then (configure of 2026-11-24T09:00:00.000Z by alice)`. */
  from: string;
  /** Settings changes inside the period asked about (the replay uses one set: the output says so). */
  changedDuring: string[];
}

/** `settings` with the old value of each change put back (owners are not settings: skipped). */
export function revertChanges(settings: unknown, changes: readonly SettingChange[]): unknown {
  const copy = structuredClone(settings) as Record<string, unknown>;
  for (const c of changes) {
    const path = c.field.split('.');
    let node: Record<string, unknown> | undefined = copy;
    for (const key of path.slice(0, -1)) {
      const next: unknown = node?.[key];
      node = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : undefined;
    }
    const leaf = path[path.length - 1]!;
    if (node !== undefined && leaf in node) node[leaf] = c.old;
  }
  return copy;
}

/** A stored row's settings read back through the loop's schema; one that does not parse is a bug, not input. */
function parsed(site: string, value: unknown, row: StoredSettingsChange): SiteHealthConfig {
  const r = siteHealthConfigSchema().safeParse(value);
  if (!r.success)
    throw new Error(`settings_changes ${row.changeKey} of ${site}: its settings do not parse: ${r.error.message}`);
  return r.data;
}

const by = (r: StoredSettingsChange): string => `configure of ${r.changedAt.toISOString()} by ${r.who}`;

export async function settingsInForce(
  pool: Pool,
  site: string,
  at: Date,
  period: { from: Date; to: Date },
  running: () => Promise<RunningSettings>,
): Promise<SettingsInForce> {
  const rows = await listSettingsChanges(pool, site);
  const changedDuring = rows.filter((r) => r.changedAt >= period.from && r.changedAt < period.to).map(by);
  const before = rows.filter((r) => r.changedAt <= at);
  const latest = before[before.length - 1];
  if (latest !== undefined)
    return {
      config: parsed(site, latest.settings, latest),
      from: `the settings in force then (${by(latest)})`,
      changedDuring,
    };
  const first = rows[0];
  if (first !== undefined)
    return {
      config: parsed(site, revertChanges(first.settings, first.changes), first),
      from: `the settings in force then (those before the ${by(first)})`,
      changedDuring,
    };
  const live = await running();
  if (live.ok)
    return {
      config: live.settings,
      from: `the running loop's settings (site-health:${site}; no settings change recorded)`,
      changedDuring,
    };
  return {
    config: replayConfig(site, '60s', undefined),
    from: `the product defaults (no settings recorded for ${site}; ${live.reason})`,
    changedDuring,
  };
}
