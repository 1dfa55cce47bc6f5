/**
 * Bearer-token authentication and scopes for every route that declares `config: { scope }`.
 *   401 — no token, a malformed, unknown or revoked one (with `WWW-Authenticate: Bearer`);
 *   403 — a valid token without the route's scope (`admin` implies every scope).
 * Verified tokens are cached for `cacheMs` (5 s): a crawler polling its controls every few seconds
 * costs no database round trip for its token, and a revoked token stops working within that time.
 * The token itself is never logged (Fastify's request log has no headers; see docs/security.md).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from '../db/pool';
import { type Principal, type Scope, verifyToken } from './tokens';
import { sendError } from './errors';

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
  cacheMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): { invalidate(): void } {
  const cacheMs = options.cacheMs ?? 5_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { principal: Principal | null; until: number }>();
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const token = bearerToken(request.headers.authorization);
    if (token === null) {
      void reply.header('www-authenticate', 'Bearer realm="target-health"');
      return sendError(reply, 401, 'unauthorized', 'Authorization: a bearer token is required (create one with `target-health token create <name> --scope …`)');
    }
    let hit = cache.get(token);
    if (hit === undefined || hit.until <= now()) {
      hit = { principal: await verifyToken(options.pool, token), until: now() + cacheMs };
      // Bounded: unknown tokens are cached too (a client retrying a bad token costs no query), so cap it.
      if (cache.size >= 10_000) cache.clear();
      cache.set(token, hit);
    }
    if (hit.principal === null) {
      void reply.header('www-authenticate', 'Bearer realm="target-health", error="invalid_token"');
      return sendError(reply, 401, 'unauthorized', 'Authorization: the token is unknown or revoked');
    }
    if (!hit.principal.scopes.has(scope) && !hit.principal.scopes.has('admin')) {
      return sendError(reply, 403, 'forbidden', `the token "${hit.principal.name}" lacks the scope "${scope}" this route needs`);
    }
    request.principal = hit.principal;
  });
  return { invalidate: () => cache.clear() };
}
