/**
 * Everything the Site page shows, read with the code the CLI uses for the same evidence: the status explained
 * (client/on-call/read-status.ts, as `target-health status`), the chart (tools/charts, as `target-health chart`,
 * as inline SVG), route and parser alerts (`history`'s), the settings in force (the loop's `settings` query) and
 * their changes (`settings_changes`), and what the site served (server/db/served.ts, worded by
 * client/on-call/served.ts). The page itself is pure (./pages/site.ts).
 */
import type { Client } from '@temporalio/client';
import { type SettingValue, settingFields } from '../../core/control/settings-change';
import { deploymentCatalogue } from '../../server/config/marker-catalogue';
import { type StoredAlert, alertsBetween } from '../../server/db/notifications';
import type { Pool } from '../../server/db/pool';
import { readServed } from '../../server/db/served';
import { type StoredSettingsChange, listSettingsChanges } from '../../server/db/settings-changes';
import { readChartData } from '../../tools/charts/read-history';
import { buildChartSpec } from '../../tools/charts/spec';
import { type SiteStatus, readStatus } from '../on-call/read-status';
import { type MarkerLookup, type ServedSummary, summariseServed } from '../on-call/served';
import { queryRunningSettings } from '../running-settings';
import { siteCharts } from './chart-cache';
import { CHART_RANGES, type ChartRange } from './paths';

/** Recent ticks shown (the loop's `history` query keeps its last 50). */
export const RECENT_TICKS = 20;
/** How far back "what the site served" reads its raw events. */
export const SERVED_SPAN_MS = 6 * 3_600_000;
const MINUTE = 60_000;
/** Settings changes listed, newest first. */
const SETTINGS_CHANGES = 20;

export interface SitePageData {
  site: string;
  status: SiteStatus;
  range: ChartRange;
  /** The chart as SVG markup (rendered by Vega from tools/charts' spec), or why there is none. */
  chart: { svg: string } | { none: string };
  /** Route and parser alerts of the last day, oldest first. */
  alerts: StoredAlert[];
  served: ServedSummary;
  settings: { fields: Array<{ field: string; value: SettingValue }> } | { none: string };
  /** The site's settings changes, newest first (at most 20). */
  settingsChanges: StoredSettingsChange[];
  now: Date;
}

/** Markers of the deployment's catalogue (the one ingestion classifies with), by id. */
export function catalogueLookup(): MarkerLookup {
  const markers = deploymentCatalogue().current().markers;
  const byId = new Map(markers.map((m) => [m.id, { vendor: m.vendor, kind: m.kind }]));
  return (id) => byId.get(id);
}

/**
 * The chart up to the end of `now`'s minute (data are per minute at the finest): every reload within a minute
 * that finds the same data gets the same chart, drawn once (./chart-cache.ts).
 */
async function chartOf(pool: Pool, site: string, range: ChartRange, now: Date): Promise<SitePageData['chart']> {
  const to = Math.ceil(now.getTime() / MINUTE) * MINUTE;
  const from = to - CHART_RANGES[range];
  const read = await readChartData(pool, site, from, to);
  if (read.ticks === 0 && read.requests === 0) return { none: 'no assessments and no traffic in this period' };
  return { svg: await siteCharts.svg(buildChartSpec(read.data)) };
}

/** The Site page's data, or null when no loop of `site` runs. */
export async function readSitePage(
  deps: { client: Client; pool: Pool },
  site: string,
  range: ChartRange,
  now: Date = new Date(),
): Promise<SitePageData | null> {
  const status = await readStatus(deps, site, RECENT_TICKS, now);
  if (status === null) return null;
  const { pool, client } = deps;
  const [chart, alerts, served, running, changes] = await Promise.all([
    chartOf(pool, site, range, now),
    alertsBetween(pool, site, new Date(now.getTime() - CHART_RANGES['1d']), now),
    readServed(pool, site, { from: new Date(now.getTime() - SERVED_SPAN_MS), to: now }),
    queryRunningSettings(client, site),
    listSettingsChanges(pool, site),
  ]);
  return {
    site,
    status,
    range,
    chart,
    alerts,
    served: summariseServed(served, catalogueLookup()),
    settings: running.ok ? { fields: settingFields(running.settings) } : { none: running.reason },
    settingsChanges: changes.slice(-SETTINGS_CHANGES).reverse(),
    now,
  };
}
