/**
 * Bearer-token authentication and scopes for every route that declares `config: { scope }`.
 *   401 — no token, a malformed, unknown or revoked one (with `WWW-Authenticate: Bearer`);
 *   403 — a valid token without the route's scope (`admin` implies every scope).
 * Answers are cached (server/api/token-cache.ts): a valid token's for 5 s (a revoked token stops working within
 * that), an unknown token's as briefly, each in its own bounded map.
 *
 * Order, per request: the rate limit first, keyed by what the cache already knows of the token (a known
 * valid token has its own budget; any other request counts against its address), then the verification.
 * So a flood of made-up tokens is limited by address before a token costs a database lookup, and an
 * address gets at most 100 lookups of tokens that are not valid a
 * minute (docs/security.md).
 * The token itself is never logged (Fastify's request log has no headers; see docs/security.md).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Pool } from '../db/pool';
import { mayUse, type Principal, type Scope, verifyToken } from './tokens';
import { sendError } from './errors';
import { LookupBudget, type TokenCache } from './token-cache';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs; routes without one are public (health, readiness, the OpenAPI document). */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** The token's principal, on routes that need a scope. */
    principal: Principal | null;
  }
}

export interface AuthOptions {
  pool: Pool;
  /** What is known of tokens; shared with the rate limit's key ({@link rateLimitKey}). */
  cache: TokenCache;
  /** Lookups of tokens that turn out not valid, per address (default: 100 a minute, server/api/token-cache.ts). */
  lookups?: LookupBudget;
}

export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** The rate limit's key of a request: its token's for a token known to be valid, else its address's. */
export function rateLimitKey(request: FastifyRequest, cache: TokenCache): string {
  const token = bearerToken(request.headers.authorization);
  return (token === null ? undefined : cache.knownValidKey(token)) ?? `ip:${request.ip}`;
}

/**
 * Registers the check on every route with a scope, as a route hook: it runs after the rate limit's own
 * route hook (registered before it, server/api/server.ts), which app-wide hooks would not.
 */
export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const { cache, pool } = options;
  const lookups = options.lookups ?? new LookupBudget();
  const verifying = new Map<string, Promise<Principal | null>>();
  /** Verifies a token and remembers the answer; `address`: the budget it was counted against, if any. */
  const lookUp = async (token: string, address: string | null): Promise<Principal | null> => {
    try {
      const found = await verifyToken(pool, token);
      // A valid token found does not count against its address.
      if (address !== null && found !== null) lookups.giveBack(address);
      cache.remember(token, found);
      return found;
    } catch (err) {
      // Not an answer about the token (the database failed): it does not count either.
      if (address !== null) lookups.giveBack(address);
      throw err;
    } finally {
      verifying.delete(token);
    }
  };
  app.decorateRequest('principal', null);
  const authenticate: onRequestAsyncHookHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const token = bearerToken(request.headers.authorization);
    if (token === null) {
      void reply.header('www-authenticate', 'Bearer realm="target-health"');
      return sendError(
        reply,
        401,
        'unauthorized',
        'Authorization: a bearer token is required (create one with `target-health token create <name> --scope …`)',
      );
    }
    let known = cache.lookup(token);
    if (known === undefined) {
      // Requests of one token arriving together (a fleet polling as its cached answer expires) share one lookup.
      let pending = verifying.get(token);
      if (pending === undefined) {
        // Someone trying many tokens from one address gets no more lookups this minute; a token verified
        // as valid before (its cached answer expired) is looked up again whatever its address did.
        const counted = cache.knownValidKey(token) === undefined;
        if (counted && !lookups.take(request.ip)) {
          const retry = lookups.retryAfterS(request.ip);
          void reply.header('retry-after', String(retry));
          return sendError(
            reply,
            429,
            'rate_limited',
            `rate limit: more than ${lookups.max} unknown tokens per minute from this address; retry in ${retry} s`,
          );
        }
        pending = lookUp(token, counted ? request.ip : null);
        verifying.set(token, pending);
      }
      known = { principal: await pending };
    }
    const principal = known.principal;
    if (principal === null) {
      void reply.header('www-authenticate', 'Bearer realm="target-health", error="invalid_token"');
      return sendError(reply, 401, 'unauthorized', 'Authorization: the token is unknown or revoked');
    }
    if (!mayUse(principal, scope)) {
      return sendError(
        reply,
        403,
        'forbidden',
        `the token "${principal.name}" lacks the scope "${scope}" this route needs`,
      );
    }
    request.principal = principal;
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.scope === undefined) return;
    const hooks =
      route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...hooks, authenticate];
  });
}
