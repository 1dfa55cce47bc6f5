/**
 * Decisions (docs/api.md, "Decisions"): `POST /v1/sites/{site}/decisions` sends resume, stop or pause
 * through the loop's validated updates (as `target-health decide` does) and answers with the applied
 * result. `who` is the token's name: the audit trail records the principal, never a name the caller
 * types. 400 for a payload the workflow's schema refuses (its one-line message), 409 for a decision not
 * allowed now (e.g. resume while the site is not waiting), 404 without a running loop.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { workflowIdForSite } from '../../../core/common/names';
import { parseDecision } from '../../../core/control/decisions';
import {
  type DecisionInputs,
  type DecisionKind,
  type DecisionResult,
  LoopErrors,
  decisionMessages,
} from '../../../loop/messages';
import { executeUpdateRetrying } from '../../temporal/update-retry';
import { sendError } from '../errors';
import { checkInput, checkSite } from '../route-input';
import { decisionBodySchema, decisionResultSchema, errorSchema, siteParamsSchema } from '../schemas/sites';
import type { RouteContext } from '../server';

function sendDecision<K extends DecisionKind>(
  handle: WorkflowHandle,
  kind: K,
  input: DecisionInputs[K],
): Promise<DecisionResult> {
  return executeUpdateRetrying(handle, decisionMessages[kind].update, [input]);
}

export function registerDecisionRoutes({ app, temporal }: RouteContext): void {
  app.post<{ Params: { site: string } }>(
    '/v1/sites/:site/decisions',
    {
      config: {
        scope: 'decide',
        openapi: {
          summary:
            "A person's decision for a site's loop: resume, pause or stop (the token's name is recorded as who " +
            'decided)',
          description:
            "Sent as the workflow's update of that name and answered once applied. resume: only while the site " +
            'waits for a person; `mode` cautious (default) or explicit with `concurrency` and ' +
            '`revisitMultiplier`. pause: when not already waiting. stop: any time; the loop ends.',
          tag: 'decisions',
          params: siteParamsSchema,
          body: decisionBodySchema,
          responses: {
            200: { description: 'the decision was applied', schema: decisionResultSchema },
            400: {
              description: 'the payload is invalid (the message names the field and the fix)',
              schema: errorSchema,
            },
            404: { description: 'no running loop for this site', schema: errorSchema },
            409: {
              description: 'the decision is not allowed now (e.g. resume while the site is not waiting)',
              schema: errorSchema,
            },
          },
        },
      },
    },
    async (request, reply) => {
      const site = checkSite(reply, request.params.site);
      if (!site.ok) return site.reply;
      const body = checkInput(reply, decisionBodySchema, request.body, 'body');
      if (!body.ok) return body.reply;
      const { kind, why, mode, concurrency, revisitMultiplier } = body.value;
      const payload = {
        who: request.principal!.name,
        why,
        ...(mode === undefined ? {} : { mode }),
        ...(concurrency === undefined ? {} : { concurrency }),
        ...(revisitMultiplier === undefined ? {} : { revisitMultiplier }),
      };
      // The workflow validates too; checking here first answers a bad payload without a round trip.
      const checked = parseDecision(kind, payload);
      if (!checked.ok) return sendError(reply, 400, 'bad_request', checked.message);
      const handle = (await temporal()).workflow.getHandle(workflowIdForSite(site.value));
      try {
        // Checked above with the workflow's own schema: a valid payload of this kind.
        return await sendDecision(handle, kind, payload as DecisionInputs[typeof kind]);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError)
          return sendError(
            reply,
            404,
            'not_found',
            `site: no running health loop for ${site.value}; start one with POST /v1/sites/${site.value}/loop`,
          );
        if (err instanceof WorkflowUpdateFailedError) {
          const cause = err.cause;
          const message = cause?.message ?? err.message;
          if (cause instanceof ApplicationFailure && cause.type === LoopErrors.InvalidDecision)
            return sendError(reply, 400, 'bad_request', message);
          if (cause instanceof ApplicationFailure && cause.type === LoopErrors.DecisionNotAllowed)
            return sendError(reply, 409, 'conflict', message);
        }
        throw err;
      }
    },
  );
}
