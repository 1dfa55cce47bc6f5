/**
 * Decisions (docs/api.md, "Decisions"): `POST /v1/sites/{site}/decisions` sends resume, stop or pause
 * through the loop's validated updates (as `target-health decide` does) and answers with the applied
 * result. `who` is the token's name: the audit trail records the principal, never a name the caller
 * types. 400 for a payload the workflow's schema refuses (its one-line message), 409 for a decision not
 * allowed now (e.g. resume while the site is not waiting), 404 without a running loop.
 */
import { sendDecision } from '../decision-send';
import { sendError } from '../errors';
import { checkInput, checkSite } from '../route-input';
import { decisionBodySchema, decisionResultSchema, errorSchema, siteParamsSchema } from '../schemas/sites';
import type { RouteContext } from '../server';

const STATUS = { invalid: 400, not_allowed: 409, not_found: 404 } as const;
const CODE = { invalid: 'bad_request', not_allowed: 'conflict', not_found: 'not_found' } as const;

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
      const sent = await sendDecision(temporal, site.value, request.principal!.name, body.value);
      if (sent.ok) return sent.result;
      const fix = sent.refused === 'not_found' ? `; start one with POST /v1/sites/${site.value}/loop` : '';
      return sendError(reply, STATUS[sent.refused], CODE[sent.refused], sent.message + fix);
    },
  );
}
