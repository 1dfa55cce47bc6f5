/**
 * What every console route checks, built once per API from its context: the session behind the request's
 * cookie, the origin and CSRF checks of a state-changing request, and the HTML answers (a page, to sign
 * in, refused). Page route modules (./page-routes/) take it, so no route checks these its own way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RouteContext } from '../../server/api/server';
import { signInPage } from './layout';
import { findSession, type ConsoleSession } from './sessions';
import { cookieValue, looksLikeSecret, originRefusal, ownOrigin, sameSecret, SESSION_COOKIE } from './session-rules';

/** The CSRF field every session's form carries (the page's other fields are each route's to validate). */
const csrfField = z.object({ csrf: z.string().max(100) });

export interface SignedInRequest {
  /** The session id (the cookie's value): only to end the session; never logged. */
  id: string;
  session: ConsoleSession;
}

export interface ConsoleGuard {
  /** The console's own origin: TH_CONSOLE_PUBLIC_URL's, else the request's scheme and Host. */
  origin: (request: FastifyRequest) => string;
  /** Served over TLS (the cookie is then `Secure`). */
  secure: (request: FastifyRequest) => boolean;
  sendPage: (reply: FastifyReply, status: number, body: string) => FastifyReply;
  toSignIn: (reply: FastifyReply) => FastifyReply;
  /** A 403 page that changes nothing, logged at warn with why. */
  refused: (request: FastifyRequest, reply: FastifyReply, why: string) => FastifyReply;
  /** The live session behind the request's cookie, or null (no cookie, unknown, expired). */
  sessionOf: (request: FastifyRequest) => Promise<SignedInRequest | null>;
  /** Why a POST is not from the console's own origin (its Origin, else its Referer), or null when it is. */
  fromElsewhere: (request: FastifyRequest) => string | null;
  /**
   * The checks of every state-changing request of a session: own origin, a live session, the session's CSRF
   * token in the form field `csrf`. Answers the request itself (to sign in, or 403) and returns null when
   * one fails.
   */
  checkPost: (request: FastifyRequest, reply: FastifyReply) => Promise<SignedInRequest | null>;
}

export function consoleGuard({ pool, settings }: RouteContext): ConsoleGuard {
  const origin = (request: FastifyRequest): string =>
    ownOrigin(settings.TH_CONSOLE_PUBLIC_URL, { protocol: request.protocol, host: request.host });
  const sendPage = (reply: FastifyReply, status: number, body: string): FastifyReply =>
    reply.code(status).type('text/html; charset=utf-8').send(body);
  const toSignIn = (reply: FastifyReply): FastifyReply => reply.code(303).header('location', '/console/sign-in').send();
  const refused = (request: FastifyRequest, reply: FastifyReply, why: string): FastifyReply => {
    request.log.warn({ why }, 'console: state-changing request refused');
    return sendPage(reply, 403, signInPage({ error: `Refused: ${why}. Reload the page and try again.` }));
  };
  const sessionOf = async (request: FastifyRequest): Promise<SignedInRequest | null> => {
    const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
    if (id === undefined || !looksLikeSecret(id)) return null;
    const session = await findSession(pool, id);
    return session === null ? null : { id, session };
  };
  const fromElsewhere = (request: FastifyRequest): string | null =>
    originRefusal(
      {
        ...(request.headers.origin === undefined ? {} : { origin: request.headers.origin }),
        ...(request.headers.referer === undefined ? {} : { referer: request.headers.referer }),
      },
      origin(request),
    );
  return {
    origin,
    secure: (request) => origin(request).startsWith('https:'),
    sendPage,
    toSignIn,
    refused,
    sessionOf,
    fromElsewhere,
    checkPost: async (request, reply) => {
      const elsewhere = fromElsewhere(request);
      if (elsewhere !== null) {
        refused(request, reply, elsewhere);
        return null;
      }
      const found = await sessionOf(request);
      if (found === null) {
        toSignIn(reply);
        return null;
      }
      const csrf = csrfField.safeParse(request.body ?? {});
      if (!csrf.success || !sameSecret(csrf.data.csrf, found.session.csrfToken)) {
        refused(request, reply, 'the form has no valid CSRF token');
        return null;
      }
      return found;
    },
  };
}
