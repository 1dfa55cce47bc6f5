/**
 * The sites listing (`GET /v1/sites`), read the way the Temporal UI and `temporal workflow list` read it:
 * one visibility list query over the loops' search attributes (HealthBand, HealthScore, ParserHealth,
 * AwaitingHuman, LoopProblem — published by every loop when they change). That is one RPC per page
 * whatever the number of sites, answered by the server's visibility store without waking any workflow,
 * and the filters (`band`, `awaiting`) run in the store. Three things are not search attributes, so:
 *   - the raw score of the latest tick comes from the assessments table, one indexed query per page;
 *   - since when a site waits comes from the loop's `state` query, asked only of the waiting sites of
 *     the page (few, and the ones a person looks at), in parallel, with a time limit;
 *   - the latest control change (when, who, what and why) from `control_audit`, one indexed query per page.
 * The cursor is the server's own page token: pages stay consistent while loops come and go. It is
 * wrapped with a tag of the listing it belongs to (namespace and filters), so a cursor the listing did
 * not hand out — edited, of other filters, of another endpoint — is a 400 naming `cursor` rather than
 * a server error or a silently empty fleet.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { HEALTH_BANDS, type HealthBand, WORKFLOW_ID_PREFIX } from '../../core/common/names';
import {
  AwaitingHuman,
  HealthBand as HealthBandKey,
  HealthScore,
  LoopProblem,
  ParserHealth,
  TargetSite,
} from '../../loop/search-attributes';
import { SITE_HEALTH_WORKFLOW, stateQuery } from '../../loop/messages';
import { latestScores } from '../db/assessments';
import { latestChanges } from '../db/history';
import { describeChange } from '../../core/control/controls';
import type { Pool } from '../db/pool';
import type { SiteSummary } from './schemas/sites';

export interface SiteListFilter {
  band?: Exclude<HealthBand, 'stopped'>;
  /** Any of these bands (`target-health sites --band a,b`); combined with `band` when both are given. */
  bands?: ReadonlyArray<Exclude<HealthBand, 'stopped'>>;
  awaiting?: boolean;
}

/** The visibility query of running loops with these filters (values come from enums: nothing to escape). */
export function siteListQuery(filter: SiteListFilter): string {
  const terms = [`WorkflowType = "${SITE_HEALTH_WORKFLOW}"`, 'ExecutionStatus = "Running"'];
  if (filter.band !== undefined) terms.push(`${HealthBandKey.name} = "${filter.band}"`);
  if (filter.bands !== undefined && filter.bands.length > 0)
    terms.push(`${HealthBandKey.name} IN (${filter.bands.map((b) => `"${b}"`).join(', ')})`);
  if (filter.awaiting !== undefined) terms.push(`${AwaitingHuman.name} = ${filter.awaiting}`);
  return terms.join(' AND ');
}

export class CursorError extends Error {}

/** Which listing a cursor belongs to: its namespace and visibility query (the filters). */
const listingTag = (namespace: string, query: string): string =>
  createHash('sha256').update(`${namespace}\n${query}`).digest('base64url').slice(0, 16);

const cursorSchema = z.strictObject({ l: z.string(), t: z.string().regex(/^[A-Za-z0-9_-]+$/) });
const NOT_A_CURSOR =
  'cursor: not a cursor of this listing; use the `next` value of the previous page, or start again without it';

export function encodeSiteCursor(tag: string, token: Uint8Array): string {
  return Buffer.from(JSON.stringify({ l: tag, t: Buffer.from(token).toString('base64url') }), 'utf8').toString(
    'base64url',
  );
}

/** The server's page token of a cursor this listing handed out; CursorError for any other. */
export function decodeSiteCursor(cursor: string, tag: string): Uint8Array {
  let parsed: z.output<typeof cursorSchema> | undefined;
  try {
    if (/^[A-Za-z0-9_-]+$/.test(cursor))
      parsed = cursorSchema.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).data;
  } catch {
    // Not JSON: not ours.
  }
  if (parsed === undefined) throw new CursorError(NOT_A_CURSOR);
  if (parsed.l !== tag)
    throw new CursorError(
      'cursor: it belongs to a listing with other filters; pass the same band and awaiting as for the first ' +
        'page, or start again without it',
    );
  return new Uint8Array(Buffer.from(parsed.t, 'base64url'));
}

function decodeAttribute(fields: Record<string, Payload> | null | undefined, name: string): unknown {
  const payload = fields?.[name];
  if (payload === undefined || payload === null) return null;
  const value = defaultPayloadConverter.fromPayload<unknown>(payload);
  // Keyword and int attributes may arrive as one-element lists (older servers): take the value.
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

const asNumber = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const asBand = (v: unknown): HealthBand | null =>
  (HEALTH_BANDS as readonly unknown[]).includes(v) ? (v as HealthBand) : null;

function timestampIso(ts: temporal.api.workflow.v1.IWorkflowExecutionInfo['startTime']): string | null {
  if (ts === null || ts === undefined) return null;
  const ms = Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
  return new Date(ms).toISOString();
}

/** Since when a waiting site waits, from its loop's state; the error's first line when it cannot be read. */
async function awaitingSince(
  client: Client,
  workflowId: string,
  timeoutMs: number,
): Promise<{ since: string | null; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  // The query is cancelled when the time is up, not left behind: an abandoned call would go on retrying on its
  // own and could outlive the connection it runs on (a closed channel then throws from a timer).
  const abort = new AbortController();
  try {
    const state = await Promise.race([
      client.connection.withAbortSignal(abort.signal, () => client.workflow.getHandle(workflowId).query(stateQuery)),
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            () =>
              reject(new Error(`the loop did not answer its state query in ${timeoutMs} ms (is a worker running?)`)),
            timeoutMs,
          )),
      ),
    ]);
    return { since: state.awaitingHuman?.since ?? null };
  } catch (err) {
    return { since: null, error: (err instanceof Error ? err.message : String(err)).split('\n')[0]! };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

export async function listSites(
  deps: { client: Client; pool: Pool },
  filter: SiteListFilter,
  page: { limit: number; cursor?: string; stateTimeoutMs?: number },
): Promise<{ sites: SiteSummary[]; next: string | null }> {
  const namespace = deps.client.options.namespace;
  const query = siteListQuery(filter);
  const tag = listingTag(namespace, query);
  const nextPageToken = page.cursor === undefined ? new Uint8Array() : decodeSiteCursor(page.cursor, tag);
  let response: temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse;
  try {
    response = await deps.client.workflowService.listWorkflowExecutions({
      namespace,
      query,
      pageSize: page.limit,
      nextPageToken,
    });
  } catch (err) {
    // A token the server cannot read (edited inside its wrapping) is the client's mistake: servers
    // answer INVALID_ARGUMENT (3) or, failing to deserialize it, UNKNOWN (2).
    const code = (err as { code?: number }).code;
    if (page.cursor !== undefined && (code === 3 || code === 2))
      throw new CursorError('cursor: not a cursor of this listing (or it expired); start again without it');
    throw err;
  }
  const rows = response.executions.map((e) => {
    const fields = e.searchAttributes?.indexedFields;
    const workflowId = e.execution?.workflowId ?? '';
    const site =
      (decodeAttribute(fields, TargetSite.name) as string | null) ?? workflowId.slice(WORKFLOW_ID_PREFIX.length);
    return {
      site,
      workflowId,
      band: asBand(decodeAttribute(fields, HealthBandKey.name)),
      smoothedScore: asNumber(decodeAttribute(fields, HealthScore.name)),
      parserHealth: asNumber(decodeAttribute(fields, ParserHealth.name)),
      awaitingHuman: decodeAttribute(fields, AwaitingHuman.name) === true,
      problem: (decodeAttribute(fields, LoopProblem.name) as string | null) ?? null,
      loopStartedAt: timestampIso(e.startTime),
    };
  });
  const [scores, changes, waits] = await Promise.all([
    latestScores(
      deps.pool,
      rows.map((r) => r.site),
    ),
    latestChanges(
      deps.pool,
      rows.map((r) => r.site),
    ),
    Promise.all(
      rows.map((r) =>
        r.awaitingHuman
          ? awaitingSince(deps.client, r.workflowId, page.stateTimeoutMs ?? 2_000)
          : Promise.resolve({ since: null }),
      ),
    ),
  ]);
  const sites = rows.map((r, i): SiteSummary => {
    const latest = scores.get(r.site);
    const wait: { since: string | null; error?: string } = waits[i]!;
    const change = changes.get(r.site);
    return {
      site: r.site,
      workflowId: r.workflowId,
      band: r.band,
      score: latest?.score ?? null,
      smoothedScore: r.smoothedScore,
      parserHealth: r.parserHealth,
      awaitingHuman: r.awaitingHuman,
      awaitingSince: wait.since,
      problem: r.problem,
      loopStartedAt: r.loopStartedAt,
      lastAssessedAt: latest ? latest.assessedAt.toISOString() : null,
      ...(wait.error === undefined ? {} : { stateUnavailable: wait.error }),
      lastChange:
        change === undefined
          ? null
          : {
              at: change.at.toISOString(),
              actor: change.actor,
              change: describeChange(change.oldControls, change.newControls),
              reason: change.reason,
              version: change.newControls.version,
            },
    };
  });
  const token = response.nextPageToken;
  return { sites, next: token && token.length > 0 ? encodeSiteCursor(tag, token) : null };
}
