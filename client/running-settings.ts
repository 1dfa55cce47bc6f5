/**
 * The settings a site's running loop has now (the workflow's `settings` query), for commands that
 * compare against them (`start` on a running site) or start from them (`review`'s replays). A loop
 * whose worker is down answers no query: the query has a deadline instead of hanging the command.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowIdForSite } from '../core/common/names';
import type { SiteHealthConfig } from '../core/control/config';
import type { CliContext } from './context';
import { settingsQuery } from '../loop/messages';

const SETTINGS_QUERY_TIMEOUT_MS = 10_000;

export type RunningSettings = { ok: true; settings: SiteHealthConfig } | { ok: false; reason: string };

export async function queryRunningSettings(client: Client, site: string): Promise<RunningSettings> {
  try {
    const handle = client.workflow.getHandle(workflowIdForSite(site));
    const settings = await client.connection.withDeadline(Date.now() + SETTINGS_QUERY_TIMEOUT_MS, () =>
      handle.query(settingsQuery),
    );
    return { ok: true, settings };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { ok: false, reason: 'no loop of this site runs' };
    return { ok: false, reason: `the loop did not answer: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The running loop's settings, or why not (no loop, Temporal unreachable): never fails the command asking. */
export async function runningSettingsOf(ctx: Pick<CliContext, 'temporal'>, site: string): Promise<RunningSettings> {
  let client: Client;
  try {
    client = await ctx.temporal();
  } catch (err) {
    return { ok: false, reason: (err instanceof Error ? err.message : String(err)).split('\n')[0]! };
  }
  return queryRunningSettings(client, site);
}
