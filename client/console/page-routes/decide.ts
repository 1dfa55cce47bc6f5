/**
 * The Decide page's routes (docs/console.md, "Decide"):
 *   GET  /console/sites/:site/decide           the situation and a form per decision allowed now
 *   POST /console/sites/:site/decide/preview   what the decision would change (nothing is sent)
 *   POST /console/sites/:site/decide           confirm: sent as the loop's update, then to the result
 *   GET  /console/sites/:site/decide/done?decision=<key>   the decision as applied and recorded
 * Every POST passes the guard (origin, session, CSRF) and needs a token with `decide` (or `admin`); `who` is
 * the session's token name. A decision goes out exactly as `POST /v1/sites/{site}/decisions` sends it
 * (server/api/decision-send.ts); one the loop refuses is explained and changes nothing.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { workflowIdForSite } from '../../../core/common/names';
import type { ActionPolicy } from '../../../core/control/controls';
import { type SiteHealthState, settingsQuery, stateQuery } from '../../../loop/messages';
import { checkDecision, sendDecision } from '../../../server/api/decision-send';
import { siteParamsSchema } from '../../../server/api/schemas/sites';
import type { RouteContext } from '../../../server/api/server';
import { mayUse } from '../../../server/api/tokens';
import { decisionAudit, readControls } from '../../../server/db/controls';
import { findDecision } from '../../../server/db/decisions';
import { cautiousPreview, planDecision, readDecideForm } from '../decide-plan';
import type { ConsoleGuard, SignedInRequest } from '../guard';
import { decidePage, decidePath, problemPage, previewPage, resultPage, type Signed } from '../pages/decide';
import { doc, formPost, html } from './openapi-doc';
import type { ConsolePageRoutes } from './index';

const doneQuery = z.strictObject({
  decision: z.string({ error: 'required: the decision key' }).min(1).max(600),
});
const params = { params: siteParamsSchema };
const STATUS = { invalid: 400, not_allowed: 409, not_found: 404 } as const;

type Loop = { state: SiteHealthState; policy: ActionPolicy };

export const registerDecideRoutes: ConsolePageRoutes = (app, ctx: RouteContext, guard: ConsoleGuard) => {
  const { pool, temporal } = ctx;
  const { sendPage } = guard;
  const signed = (found: SignedInRequest): Signed => ({
    who: found.session.principal.name,
    csrfToken: found.session.csrfToken,
    now: new Date(),
  });
  const problem = (
    reply: FastifyReply,
    found: SignedInRequest,
    status: number,
    site: string | null,
    title: string,
    message: string,
  ): FastifyReply => sendPage(reply, status, problemPage({ ...signed(found), site, title, message }));

  /** The loop's state and the site's policy (what a decision's controls are computed with); null: no loop. */
  const loopOf = async (site: string): Promise<Loop | null> => {
    const handle = (await temporal()).workflow.getHandle(workflowIdForSite(site));
    try {
      const [state, settings] = await Promise.all([handle.query(stateQuery), handle.query(settingsQuery)]);
      return { state, policy: settings.policy };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return null;
      throw err;
    }
  };

  /** The path's site, normalised as the CLI's `<site>`; or a 400 page naming the field (answered: null). */
  const siteOf = (request: FastifyRequest, reply: FastifyReply, found: SignedInRequest): string | null => {
    const raw = (request.params as { site: string }).site;
    const checked = tryNormaliseSite(raw);
    if (checked.ok) return checked.site;
    problem(reply, found, 400, null, 'No such site', `site: ${checked.error.message}; pick a site on the fleet page`);
    return null;
  };
  const noLoop = (reply: FastifyReply, found: SignedInRequest, site: string): FastifyReply =>
    problem(
      reply,
      found,
      404,
      null,
      'No running loop',
      `site: no running health loop for ${site}; start one with \`target-health start ${site}\``,
    );

  const decideView = (found: SignedInRequest, loop: Loop) => ({
    ...signed(found),
    state: loop.state,
    cautious: cautiousPreview(loop.state, loop.policy),
    canDecide: mayUse(found.session.principal, 'decide'),
    scopes: [...found.session.principal.scopes],
  });

  app.get(
    '/console/sites/:site/decide',
    { config: doc("The Decide page: the site's situation and a form per decision allowed now", params) },
    async (request, reply) => {
      const found = await guard.sessionOf(request);
      if (found === null) return guard.toSignIn(reply);
      const site = siteOf(request, reply, found);
      if (site === null) return reply;
      const loop = await loopOf(site);
      if (loop === null) return noLoop(reply, found, site);
      return sendPage(reply, 200, decidePage(decideView(found, loop)));
    },
  );

  /**
   * What both POSTs check before anything is sent: the guard, the scope, the site, the form, the loop; then
   * the decision previewed against the loop's state. Answers the request itself and returns null when one fails.
   */
  const prepare = async (request: FastifyRequest, reply: FastifyReply) => {
    const found = await guard.checkPost(request, reply);
    if (found === null) return null;
    const principal = found.session.principal;
    if (!mayUse(principal, 'decide')) {
      const why = `the token "${principal.name}" lacks the scope "decide"`;
      request.log.warn({ why, token: principal.name }, 'console: state-changing request refused');
      problem(
        reply,
        found,
        403,
        null,
        'Refused: nothing changed',
        `Refused: ${why}; a read-only session cannot decide`,
      );
      return null;
    }
    const site = siteOf(request, reply, found);
    if (site === null) return null;
    const loop = await loopOf(site);
    if (loop === null) {
      noLoop(reply, found, site);
      return null;
    }
    const form = readDecideForm(request.body);
    const checked = form.ok ? checkDecision(principal.name, form.form.fields) : form;
    if (!form.ok || !checked.ok) {
      const error = { message: checked.ok ? '' : checked.message, typed: form.typed };
      sendPage(reply, 400, decidePage({ ...decideView(found, loop), error }));
      return null;
    }
    const plan = planDecision(loop.state, loop.policy, checked.decision, checked.payload);
    return { found, site, form: form.form, plan };
  };

  app.post(
    '/console/sites/:site/decide/preview',
    {
      config: doc('Preview a decision: the controls now and after, the equivalent CLI command (nothing is sent)', {
        ...params,
        ...formPost,
        responses: {
          ...formPost.responses,
          200: html('the preview, with the confirm form'),
          409: html('the loop would refuse this decision now (why, in words)'),
        },
      }),
    },
    async (request, reply) => {
      const ready = await prepare(request, reply);
      if (ready === null) return reply;
      const { found, plan } = ready;
      return sendPage(reply, plan.notAllowed === null ? 200 : 409, previewPage({ ...signed(found), plan }));
    },
  );

  app.post(
    '/console/sites/:site/decide',
    {
      config: doc("Confirm a previewed decision: sent as the loop's update, then to the result", {
        ...params,
        ...formPost,
        responses: {
          ...formPost.responses,
          303: { description: 'applied: to the result page' },
          404: html('no running loop for this site'),
          409: html('the loop refused the decision, or the site changed since the preview (nothing changed)'),
        },
      }),
    },
    async (request, reply) => {
      const ready = await prepare(request, reply);
      if (ready === null) return reply;
      const { found, site, form, plan } = ready;
      if (plan.notAllowed !== null)
        return problem(reply, found, 409, site, 'Refused: nothing changed', plan.notAllowed);
      // The person confirms what the preview showed; if the site moved since, they see the new preview first.
      if (form.plan !== plan.fingerprint)
        return sendPage(
          reply,
          409,
          previewPage({
            ...signed(found),
            plan,
            note:
              form.plan === undefined
                ? 'Nothing was sent: check the preview, then confirm.'
                : 'Nothing was sent: the site changed since your preview. Check the new preview, then confirm.',
          }),
        );
      const who = found.session.principal.name;
      const sent = await sendDecision(temporal, site, who, form.fields);
      if (!sent.ok) {
        request.log.warn({ token: who, site, kind: plan.kind, why: sent.message }, 'console: decision refused');
        const fix = sent.refused === 'not_found' ? `; start one with \`target-health start ${site}\`` : '';
        return problem(reply, found, STATUS[sent.refused], site, 'Refused: nothing changed', sent.message + fix);
      }
      request.log.info(
        { token: who, site, kind: plan.kind, decisionKey: sent.result.decisionKey },
        'console: decision applied',
      );
      return reply
        .code(303)
        .header('location', `${decidePath(site)}/done?decision=${encodeURIComponent(sent.result.decisionKey)}`)
        .send();
    },
  );

  app.get(
    '/console/sites/:site/decide/done',
    {
      config: doc('A decision as the loop applied it: its audit entry, the controls, the state', {
        ...params,
        query: doneQuery,
      }),
    },
    async (request, reply) => {
      const found = await guard.sessionOf(request);
      if (found === null) return guard.toSignIn(reply);
      const site = siteOf(request, reply, found);
      if (site === null) return reply;
      const q = doneQuery.safeParse(request.query ?? {});
      if (!q.success) return problem(reply, found, 400, site, 'No such decision', formatIssues(q.error));
      const decision = await findDecision(pool, site, q.data.decision);
      if (decision === undefined)
        return problem(
          reply,
          found,
          404,
          site,
          'No such decision',
          `decision: ${site} has no decision ${q.data.decision}; see the site's decisions with ` +
            `\`target-health history ${site}\``,
        );
      const [audit, controls, loop] = await Promise.all([
        decisionAudit(pool, site, decision.decisionKey),
        readControls(pool, site),
        loopOf(site),
      ]);
      return sendPage(
        reply,
        200,
        resultPage({ ...signed(found), site, decision, audit, controls, state: loop?.state ?? null }),
      );
    },
  );
};
