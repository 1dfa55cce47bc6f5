/**
 * The web console's routes (docs/console.md), in the API process beside the JSON routes:
 *   GET  /console            → the Fleet page
 *   GET  /console/sign-in    the sign-in form;   POST it: the token in the form body → a session cookie
 *   POST /console/sign-out   ends the session (CSRF token and origin checked)
 * and the page route modules of ./page-routes/ (CONSOLE_PAGE_ROUTES: the Fleet page among them), each with
 * the same guard (./guard.ts).
 * They use no bearer token: the session (client/console/sessions.ts) stands for the token it was
 * opened with. Every POST is checked against the console's own origin, and every POST but sign-in (which
 * has no session yet) carries the session's CSRF token. Form bodies are parsed here only (an
 * encapsulated plugin), so the JSON routes keep refusing them with 415.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import type { RouteContext } from '../../server/api/server';
import { LookupBudget } from '../../server/api/token-cache';
import { verifyToken } from '../../server/api/tokens';
import { CONTENT_SECURITY_POLICY, signInPage } from './layout';
import { consoleGuard } from './guard';
import { CONSOLE_PAGE_ROUTES } from './page-routes/index';
import { doc, formPost } from './page-routes/openapi-doc';
import { createSession, deleteSession } from './sessions';
import { cookieMaxAgeS, sessionCookieHeader } from './session-rules';

/** A form body is a few fields: anything larger is not ours. */
const FORM_LIMIT = 8 * 1024;

const signInBody = z.strictObject({ token: z.string().min(1, { error: 'required: your API token' }).max(200) });

export async function registerConsoleRoutes(ctx: RouteContext): Promise<void> {
  await ctx.app.register((app) => consolePlugin(app, ctx));
}

function consolePlugin(app: FastifyInstance, ctx: RouteContext): void {
  const { pool } = ctx;
  const guard = consoleGuard(ctx);
  const { sendPage, refused, fromElsewhere } = guard;
  // Sign-in looks tokens up as the bearer check does, so it gets the same cap: at most 100 lookups a minute
  // per address of tokens that turn out not valid (server/api/token-cache.ts).
  const lookups = new LookupBudget();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.addHook('onSend', async (_request, reply) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('text/html'))
      void reply
        .header('content-security-policy', CONTENT_SECURITY_POLICY)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        .header('cache-control', 'no-store');
  });

  app.get('/console', { config: doc('The console: to the Fleet page') }, (_request, reply) =>
    reply.code(303).header('location', '/console/fleet').send(),
  );

  app.get('/console/sign-in', { config: doc('The sign-in form') }, (_request, reply) =>
    sendPage(reply, 200, signInPage()),
  );

  app.post(
    '/console/sign-in',
    { config: doc('Sign in with an API token (form body)', formPost) },
    async (request, reply) => {
      // Sign-in has no session to hold a CSRF token yet; the origin check stops another site signing a
      // browser in under the attacker's token (login CSRF).
      const elsewhere = fromElsewhere(request);
      if (elsewhere !== null) return refused(request, reply, elsewhere);
      const body = signInBody.safeParse(request.body ?? {});
      if (!body.success) return sendPage(reply, 400, signInPage({ error: formatIssues(body.error, { root: 'form' }) }));
      if (!lookups.take(request.ip))
        return sendPage(
          reply.header('retry-after', String(lookups.retryAfterS(request.ip))),
          429,
          signInPage({ error: 'Too many unknown tokens from this address; wait a minute and try again.' }),
        );
      const principal = await verifyToken(pool, body.data.token.trim());
      if (principal !== null) lookups.giveBack(request.ip);
      if (principal === null) {
        request.log.info('console: sign-in refused (unknown or revoked token)');
        return sendPage(reply, 401, signInPage({ error: 'That token is unknown or revoked.' }));
      }
      if (!principal.scopes.has('read') && !principal.scopes.has('admin'))
        return sendPage(
          reply,
          403,
          signInPage({
            error: `The token "${principal.name}" lacks the scope "read" the console needs to show anything.`,
          }),
        );
      const created = await createSession(pool, principal);
      request.log.info({ token: principal.name }, 'console: signed in');
      return reply
        .code(303)
        .header(
          'set-cookie',
          sessionCookieHeader(created.id, {
            secure: guard.secure(request),
            maxAgeS: cookieMaxAgeS(created.createdAt, new Date()),
          }),
        )
        .header('location', '/console/fleet')
        .send();
    },
  );

  app.post('/console/sign-out', { config: doc('Sign out: the session ends', formPost) }, async (request, reply) => {
    const found = await guard.checkPost(request, reply);
    if (found === null) return reply;
    await deleteSession(pool, found.id);
    request.log.info({ token: found.session.principal.name }, 'console: signed out');
    return reply
      .code(303)
      .header('set-cookie', sessionCookieHeader('', { secure: guard.secure(request), maxAgeS: 0 }))
      .header('location', '/console/sign-in')
      .send();
  });

  for (const register of CONSOLE_PAGE_ROUTES) register(app, ctx, guard);
}
