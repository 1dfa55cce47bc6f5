/**
 * One log line per request, at the level it deserves (docs/api.md, "Running it"): debug for an ordinary
 * answer, so `npm start` at info does not log every poll of every crawler; info for a request slower
 * than {@link SLOW_REQUEST_MS}; warn for a server error (5xx). Fastify's own two lines per request
 * (incoming, completed, both at info) are off. The URL is logged with secret query values masked
 * (server/logging/logger.ts masks every line).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** A request that took longer than this (ms) is logged at info: the API's statements are small. */
export const SLOW_REQUEST_MS = 1_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route holds requests open on purpose (a long-poll, an event stream): never logged as slow. */
    holdsOpen?: boolean;
  }
}

export type RequestLogLevel = 'debug' | 'info' | 'warn';

export function requestLogLevel(status: number, elapsedMs: number, holdsOpen: boolean): RequestLogLevel {
  if (status >= 500) return 'warn';
  if (elapsedMs > SLOW_REQUEST_MS && !holdsOpen) return 'info';
  return 'debug';
}

export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const ms = reply.elapsedTime;
    const level = requestLogLevel(reply.statusCode, ms, request.routeOptions.config?.holdsOpen === true);
    const fields = {
      req: { method: request.method, url: request.url },
      res: { statusCode: reply.statusCode },
      responseTime: Math.round(ms),
    };
    request.log[level](fields, level === 'info' ? `slow request (over ${SLOW_REQUEST_MS} ms)` : 'request completed');
  });
}
