/**
 * `GET /metrics`: Prometheus text (prom-client) — the API's own counters and latency histograms and the
 * per-site gauges read at scrape time (server/api/site-metrics.ts). Scope `read`: per-site scores and bands are
 * not for anyone who can reach the port; Prometheus sends the token with `authorization:` in its scrape
 * config (docs/api.md, "Operations").
 */
import { z } from 'zod';
import type { RouteContext } from '../server';
import { registerSiteGauges } from '../site-metrics';
import { createSnapshotReader } from '../site-snapshot';

export function registerMetricsRoutes({ app, pool, temporal, metrics }: RouteContext): void {
  const read = createSnapshotReader({
    pool,
    temporal,
    onError: (source, err) =>
      app.log.warn(
        { source, err: err instanceof Error ? err.message : String(err) },
        '/metrics: per-site gauges could not read this source; its gauges are left out',
      ),
  });
  registerSiteGauges(metrics.registry, read);

  app.get(
    '/metrics',
    {
      config: {
        scope: 'read',
        openapi: {
          summary: 'Prometheus metrics: per-site gauges, events ingested and rejected, request latency',
          tag: 'operations',
          responses: {
            200: {
              description: 'Prometheus text exposition format',
              schema: z.string(),
              mediaType: 'text/plain; version=0.0.4',
            },
            401: { description: 'no token, or an unknown or revoked one' },
            403: { description: 'the token lacks the scope `read`' },
          },
        },
      },
    },
    async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
