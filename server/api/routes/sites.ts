/**
 * Sites (docs/api.md, "Sites"): the listing with band, scores, parser health and who waits since when;
 * one site's state (the loop's `state` and `history` queries, as `target-health status --json`); its
 * assessments over a range, paged; and starting its loop (as `target-health start`, scope admin).
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { TASK_QUEUE, workflowIdForSite } from '../../../core/common/names';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { siteHealthInputSchema } from '../../../core/control/config';
import { type SiteHealthState, type TickSummary, historyQuery, stateQuery } from '../../../loop/messages';
import { type AssessmentCursor, pageAssessments } from '../../db/assessments';
import { upsertSite } from '../../db/sites';
import { startSiteLoop } from '../../temporal/start-loop';
import { sendError } from '../errors';
import { checkInput, checkSite } from '../route-input';
import {
  assessmentPageSchema,
  assessmentsQuerySchema,
  errorSchema,
  siteListQuerySchema,
  siteListSchema,
  siteParamsSchema,
  siteStateSchema,
  startLoopBodySchema,
  startLoopResultSchema,
} from '../schemas/sites';
import { CursorError, listSites } from '../site-list';
import type { RouteContext } from '../server';

const bad = { description: 'a parameter is invalid (the message names it and the fix)', schema: errorSchema };
const noLoop = { description: 'no loop for this site', schema: errorSchema };

const stateParamsQuery = z.strictObject({
  history: z.coerce
    .number({ error: 'expected a whole number 0-50' })
    .int({ error: 'expected a whole number 0-50' })
    .min(0, { error: 'expected a whole number 0-50' })
    .max(50, { error: 'expected a whole number 0-50' })
    .default(10)
    .describe('recent ticks to include (0-50, default 10)'),
});

/** An assessments cursor: the (time, key) the page ended on, opaque to the client. */
const cursorSchema = z.strictObject({ assessedAt: z.iso.datetime(), assessmentKey: z.string().min(1) });
function decodeCursor(raw: string): AssessmentCursor | null {
  try {
    const parsed = cursorSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
const encodeCursor = (c: AssessmentCursor): string => Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');

export function registerSitesRoutes({ app, pool, temporal, taskQueue }: RouteContext): void {
  app.get(
    '/v1/sites',
    {
      config: {
        scope: 'read',
        openapi: {
          summary: 'List the sites whose loop runs: band, scores, parser health, waiting for a person and since when',
          description:
            "Read from the loops' search attributes (one visibility query per page, as the Temporal UI lists " +
            'them); the raw score from the latest stored assessment; `awaitingSince` from the state of the ' +
            'waiting sites of the page. Ordered by the visibility store (newest loop first).',
          tag: 'sites',
          query: siteListQuerySchema,
          responses: { 200: { description: 'a page of sites', schema: siteListSchema }, 400: bad },
        },
      },
    },
    async (request, reply) => {
      const q = checkInput(reply, siteListQuerySchema, request.query, 'query');
      if (!q.ok) return q.reply;
      const { band, awaiting, limit, cursor } = q.value;
      try {
        return await listSites(
          { client: await temporal(), pool },
          {
            ...(band === undefined ? {} : { band }),
            ...(awaiting === undefined ? {} : { awaiting: awaiting === 'true' }),
          },
          { limit, ...(cursor === undefined ? {} : { cursor }) },
        );
      } catch (err) {
        if (err instanceof CursorError) return sendError(reply, 400, 'bad_request', err.message);
        throw err;
      }
    },
  );

  app.get<{ Params: { site: string } }>(
    '/v1/sites/:site',
    {
      config: {
        scope: 'read',
        openapi: {
          summary: "One site's loop state and its recent ticks (as `target-health status --json`)",
          tag: 'sites',
          params: siteParamsSchema,
          query: stateParamsQuery,
          responses: {
            200: { description: "the loop's state with `history`", schema: siteStateSchema },
            400: bad,
            404: noLoop,
          },
        },
      },
    },
    async (request, reply) => {
      const site = checkSite(reply, request.params.site);
      if (!site.ok) return site.reply;
      const q = checkInput(reply, stateParamsQuery, request.query, 'query');
      if (!q.ok) return q.reply;
      const handle = (await temporal()).workflow.getHandle(workflowIdForSite(site.value));
      try {
        const state: SiteHealthState = await handle.query(stateQuery);
        const history: TickSummary[] = q.value.history > 0 ? await handle.query(historyQuery, q.value.history) : [];
        return { ...state, history };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError)
          return sendError(
            reply,
            404,
            'not_found',
            `site: no health loop for ${site.value}; start one with POST /v1/sites/${site.value}/loop`,
          );
        throw err;
      }
    },
  );

  app.get<{ Params: { site: string } }>(
    '/v1/sites/:site/assessments',
    {
      config: {
        scope: 'read',
        openapi: {
          summary: "A site's assessments over a time range, oldest first, paged",
          description:
            'One row per tick of the loop (every chain of the site). Keyset-paged: pass `next` as `cursor` ' +
            'with the same range.',
          tag: 'sites',
          params: siteParamsSchema,
          query: assessmentsQuerySchema,
          responses: { 200: { description: 'a page of assessments', schema: assessmentPageSchema }, 400: bad },
        },
      },
    },
    async (request, reply) => {
      const site = checkSite(reply, request.params.site);
      if (!site.ok) return site.reply;
      const q = checkInput(reply, assessmentsQuerySchema, request.query, 'query');
      if (!q.ok) return q.reply;
      const { from, to, limit, cursor, detail } = q.value;
      if (from !== undefined && to !== undefined && Date.parse(from) >= Date.parse(to))
        return sendError(reply, 400, 'bad_request', `to: ${to} must be after from (${from})`);
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      if (after === null)
        return sendError(
          reply,
          400,
          'bad_request',
          'cursor: not a cursor of this endpoint; use the `next` value of the previous page',
        );
      const page = await pageAssessments(pool, site.value, {
        limit,
        withResult: detail === 'full',
        ...(from === undefined ? {} : { from: new Date(from) }),
        ...(to === undefined ? {} : { to: new Date(to) }),
        ...(after === undefined ? {} : { after }),
      });
      return { site: site.value, assessments: page.rows, next: page.next === null ? null : encodeCursor(page.next) };
    },
  );

  app.post<{ Params: { site: string } }>(
    '/v1/sites/:site/loop',
    {
      config: {
        scope: 'admin',
        openapi: {
          summary: 'Register a site and start its health loop (as `target-health start --config`)',
          description:
            'The body is optional: without it the loop runs with the product defaults (a tick every 60 s). ' +
            '`config` holds what a `--config` file holds, validated the same way.',
          tag: 'sites',
          params: siteParamsSchema,
          body: startLoopBodySchema,
          responses: {
            201: { description: 'the loop started', schema: startLoopResultSchema },
            400: {
              description: 'a setting is invalid (the message names it, e.g. config.policy.concurrency.nominal)',
              schema: errorSchema,
            },
            409: { description: 'a loop of this site is already running', schema: errorSchema },
          },
        },
      },
    },
    async (request, reply) => {
      const site = checkSite(reply, request.params.site);
      if (!site.ok) return site.reply;
      const body = checkInput(reply, startLoopBodySchema, request.body ?? undefined, 'body');
      if (!body.ok) return body.reply;
      const config = body.value?.config ?? {};
      // The site is the path's, and `carried` is a continued run's state: neither is a setting.
      if ('site' in config)
        return sendError(reply, 400, 'bad_request', 'config.site: the site comes from the path; remove it');
      if ('carried' in config)
        return sendError(
          reply,
          400,
          'bad_request',
          'config.carried: the state of a continued run, not a setting; remove it',
        );
      const input = { ...config, site: site.value };
      const checked = siteHealthInputSchema().safeParse(input);
      if (!checked.success)
        return sendError(reply, 400, 'bad_request', formatIssues(checked.error, { prefix: 'config' }));
      await upsertSite(pool, site.value, {
        ...(body.value?.owner === undefined ? {} : { owner: body.value.owner }),
        ...(body.value?.parserOwner === undefined ? {} : { parserOwner: body.value.parserOwner }),
      });
      const tickIntervalMs = checked.data.tickIntervalMs;
      const started = await startSiteLoop(
        await temporal(),
        taskQueue ?? TASK_QUEUE,
        input,
        checked.data,
        `${tickIntervalMs / 1000}s`,
      );
      if (!started.started) {
        return sendError(
          reply,
          409,
          'conflict',
          `site: the health loop ${started.workflowId} is already running; stop it (POST ` +
            `/v1/sites/${site.value}/decisions {"kind": "stop"}) before starting another`,
        );
      }
      return reply
        .code(201)
        .send({ site: site.value, workflowId: started.workflowId, runId: started.runId, tickIntervalMs });
    },
  );
}
