/**
 * Incident marks (docs/api.md, "Incident marks"): `POST /v1/sites/{site}/incident-marks` records a person's verdict
 * on an incident — `right` or `false-alarm` — for `target-health tune` to learn from (docs/tuning.md, "Labels"), as
 * `target-health review --mark` does. A mark is a judgement of the loop's decisions, so it takes the scope that
 * makes them: `decide`. `who` is the token's name (never a name the caller types); the table is insert-only, so it
 * is its own audit trail, and the latest mark of an incident counts. The API takes the time only: the incident's
 * window (which the CLI stores beside it) is the review's to find.
 */
import { z } from 'zod';
import { whySchema } from '../../../core/control/decisions';
import { recordIncidentMark } from '../../db/incident-marks';
import { siteKnown } from '../../db/sites';
import { sendError } from '../errors';
import { checkInput, checkSite } from '../route-input';
import { errorSchema, siteParamsSchema } from '../schemas/sites';
import type { RouteContext } from '../server';

const VERDICTS = { right: 'right', 'false-alarm': 'false_alarm' } as const;

export const incidentMarkBodySchema = z.strictObject({
  at: z.iso
    .datetime({ offset: true, error: 'expected an ISO-8601 time with a zone, e.g. 2026-11-24T10:00:00Z' })
    .describe('a time in the incident (ISO-8601 with a zone), as `review --incident` takes it'),
  verdict: z
    .enum(['right', 'false-alarm'], { error: 'expected right or false-alarm' })
    .describe('right: the loop was right to act; false-alarm: it should not have'),
  why: whySchema().describe('why, in a sentence (audit trail)'),
});

export const incidentMarkResultSchema = z.object({
  id: z.string(),
  site: z.string(),
  at: z.string(),
  verdict: z.enum(['right', 'false-alarm']),
  who: z.string(),
  why: z.string(),
  markedAt: z.string(),
});

export function registerIncidentMarkRoutes({ app, pool }: RouteContext): void {
  app.post<{ Params: { site: string } }>(
    '/v1/sites/:site/incident-marks',
    {
      config: {
        scope: 'decide',
        openapi: {
          summary: "A person's verdict on an incident, for `tune` (the token's name is recorded as who marked it)",
          description:
            'Insert-only: marking an incident again adds a mark, and the latest counts. `tune` labels the incident ' +
            'around `at` with it (docs/tuning.md).',
          tag: 'decisions',
          params: siteParamsSchema,
          body: incidentMarkBodySchema,
          responses: {
            201: { description: 'the mark was recorded', schema: incidentMarkResultSchema },
            400: {
              description: 'the payload is invalid (the message names the field and the fix)',
              schema: errorSchema,
            },
            404: { description: 'the site is unknown here (no stored traffic, not registered)', schema: errorSchema },
          },
        },
      },
    },
    async (request, reply) => {
      const site = checkSite(reply, request.params.site);
      if (!site.ok) return site.reply;
      const body = checkInput(reply, incidentMarkBodySchema, request.body, 'body');
      if (!body.ok) return body.reply;
      const at = new Date(body.value.at);
      if (at.getTime() > Date.now())
        return sendError(reply, 400, 'bad_request', 'at: in the future; give a time the incident was under way');
      if (!(await siteKnown(pool, site.value)))
        return sendError(
          reply,
          404,
          'not_found',
          `site: ${site.value} is unknown here (no stored traffic, not registered); ingest its events first`,
        );
      const stored = await recordIncidentMark(pool, {
        site: site.value,
        incidentAt: at,
        incidentFrom: null,
        incidentTo: null,
        verdict: VERDICTS[body.value.verdict],
        who: request.principal!.name,
        why: body.value.why,
      });
      return reply.code(201).send({
        id: stored.id,
        site: stored.site,
        at: stored.incidentAt.toISOString(),
        verdict: body.value.verdict,
        who: stored.who,
        why: stored.why,
        markedAt: stored.markedAt.toISOString(),
      });
    },
  );
}
