/**
 * The HTTP API (`target-health api`, docs/api.md): one Fastify instance with the rate limit, bearer-token
 * auth and every route module of server/api/routes/. Built by `buildApi` so the tests and the benchmark run
 * the same server the command runs, on a random port.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { Client } from '@temporalio/client';
import type { Pool } from '../db/pool';
import type { Logger } from '../logging/logger';
import { rateLimitKey, registerAuth } from './auth';
import { TokenCache } from './token-cache';
import { sendError, sendStoreUnavailable, STORE_RETRY_AFTER_S } from './errors';
import { describePgError, isDatabaseUnavailable } from '../db/pool';
import type { ApiSettings } from './settings';
import { type RegisterRoutes, ROUTES } from './routes';
import { type ApiMetrics, createApiMetrics } from './metrics';
import type { IngestThreadsOptions } from './ingest-threads';
import { MAX_SITE_INPUT_CHARS } from '@target-health/crawler/events/site';
import { registerRequestLog } from './request-log';
import './openapi-meta';

export interface ApiDeps {
  pool: Pool;
  /** The Temporal client (decisions, starting loops, readiness); connected lazily by the caller. */
  temporal: () => Promise<Client>;
  /** The task queue loops started through the API run on (default: the product's, core/common/names.ts TASK_QUEUE). */
  taskQueue?: string;
  logger: Logger;
  settings: ApiSettings;
  /**
   * Worker threads for NDJSON event bodies (server/api/ingest-threads.ts): the compiled worker script and the
   * database they connect to. Absent: events are parsed and stored on the server's own thread.
   */
  ingestThreads?: IngestThreadsOptions;
  /**
   * Route modules of the layers above the server, registered after the API's own (and documented by the same
   * OpenAPI hook): the web console (client/console/routes.ts) — it renders what the CLI's on-call, review
   * and chart code computes, which the server layer may not import.
   */
  extraRoutes?: readonly RegisterRoutes[];
}

/** What every route module gets. */
export interface RouteContext extends ApiDeps {
  app: FastifyInstance;
  metrics: ApiMetrics;
}

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  // Typed as Fastify's logger interface, so the instance is the plain FastifyInstance route modules take.
  const logger: FastifyBaseLogger = deps.logger.child({ component: 'api' });
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: deps.settings.TH_API_BODY_LIMIT,
    return503OnClosing: true,
    // One line per request, by server/api/request-log.ts, instead of Fastify's two at info.
    logController: new LogController({ disableRequestLogging: true }),
    // A `{site}` is taken as the CLI's <site> argument takes it (up to MAX_SITE_INPUT_CHARS, any host
    // percent-encoded): Fastify's default limit (100) refused valid host names.
    routerOptions: { maxParamLength: MAX_SITE_INPUT_CHARS },
    // The router's own refusals, in the API's error format and without the path (it can be kilobytes).
    frameworkErrors: (err, _request, reply) => {
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        void sendError(
          reply,
          414,
          'uri_too_long',
          `path: a part of the path is longer than ${MAX_SITE_INPUT_CHARS} characters; a site is a host name ` +
            `(at most 253 characters)`,
        );
      } else if (err.code === 'FST_ERR_BAD_URL') {
        void sendError(
          reply,
          400,
          'bad_request',
          'path: not a valid URL (a broken %-escape); encode the site with encodeURIComponent',
        );
      } else {
        void sendError(reply, err.statusCode ?? 400, 'bad_request', 'request: refused by the router');
      }
    },
  });

  // A user's mistake is one line naming the field, never a stack trace.
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, request, reply) => {
    // PostgreSQL did not answer (frozen, down, out of connections): any route, the token check included.
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ error: describePgError(err) }, 'request failed: the database is unavailable');
      return sendStoreUnavailable(
        reply,
        `database: PostgreSQL did not answer (${describePgError(err)}); retry in ${STORE_RETRY_AFTER_S} s`,
      );
    }
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return sendError(reply, status, 'internal', 'internal error (logged on the server)');
    }
    if (status === 413)
      return sendError(
        reply,
        413,
        'too_large',
        `body: larger than the limit of ${deps.settings.TH_API_BODY_LIMIT} bytes; send smaller batches`,
      );
    if (status === 415) return sendError(reply, 415, 'unsupported_media_type', err.message);
    return sendError(reply, status, err.code?.toLowerCase() ?? 'bad_request', err.message);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      404,
      'not_found',
      `${request.method} ${request.url.split('?')[0]}: no such route (see /openapi.json)`,
    ),
  );

  const tokens = new TokenCache();
  await app.register(rateLimit, {
    max: deps.settings.TH_API_RATE_LIMIT,
    timeWindow: 60_000,
    // Per token known to be valid (its hash: the secret is not kept as a key), else per address: a
    // made-up token is no budget of its own, and is limited before it costs a lookup (server/api/auth.ts).
    keyGenerator: (request) => rateLimitKey(request, tokens),
    // The plugin throws what this returns, so it reaches the error handler above: an Error with a status
    // and a code becomes the one-line `{"error": {"code": "rate_limited", …}}` (a plain object would not).
    errorResponseBuilder: (request, context) => {
      const whose = rateLimitKey(request, tokens).startsWith('token:')
        ? 'for this token'
        : 'from this address (without a valid token)';
      return Object.assign(
        new Error(
          `rate limit: more than ${context.max} requests per minute ${whose}; retry in ` +
            `${Math.ceil(context.ttl / 1000)} s`,
        ),
        { statusCode: 429, code: 'RATE_LIMITED' },
      );
    },
  });
  // CORS is off unless origins are configured: the API serves crawlers and tools, not browsers.
  const origins = deps.settings.TH_API_CORS_ORIGINS.split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (origins.length > 0)
    await app.register(cors, {
      origin: origins,
      allowedHeaders: ['authorization', 'content-type', 'content-encoding', 'if-none-match', 'last-event-id'],
      exposedHeaders: ['etag'],
    });
  // After the rate limit: its route hook runs first (server/api/auth.ts).
  registerAuth(app, { pool: deps.pool, cache: tokens });

  registerRequestLog(app);
  const metrics = createApiMetrics();
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requestSeconds.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  const ctx: RouteContext = { ...deps, app, metrics };
  for (const register of [...ROUTES, ...(deps.extraRoutes ?? [])]) await register(ctx);
  return app;
}
