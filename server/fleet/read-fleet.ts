/**
 * The whole fleet as `target-health sites` and the console's Fleet page show it: every running loop the
 * filters the visibility store can apply let through (server/api/site-list.ts, page by page, the code
 * behind `GET /v1/sites`), ordered by urgency and filtered by name (./fleet.ts), with each site's score
 * sparkline over the last 24 h in one statement for all listed sites (server/db/score-trend.ts). One
 * reader for both surfaces, so the CLI and the console cannot disagree.
 */
import type { Client } from '@temporalio/client';
import type { SiteSummary } from '../api/schemas/sites';
import { listSites } from '../api/site-list';
import type { Pool } from '../db/pool';
import { scoreBuckets } from '../db/score-trend';
import { buildFleet, type Fleet, withTrends } from './fleet';
import { trendRange, trendsFrom } from './trend';

/** Sites per visibility page: the API's largest page. */
const PAGE = 500;

export async function readFleet(deps: { client: Client; pool: Pool }, filter: Fleet['filter']): Promise<Fleet> {
  const rows: SiteSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await listSites(
      deps,
      { ...(filter.bands === null ? {} : { bands: filter.bands }), ...(filter.awaiting ? { awaiting: true } : {}) },
      { limit: PAGE, ...(cursor === undefined ? {} : { cursor }) },
    );
    rows.push(...page.sites);
    cursor = page.next ?? undefined;
  } while (cursor !== undefined);
  const now = new Date();
  const fleet = buildFleet(rows, filter, now);
  const range = trendRange(now);
  const listed = fleet.sites.map((s) => s.site);
  return withTrends(fleet, range, trendsFrom(await scoreBuckets(deps.pool, listed, range), listed, range));
}
