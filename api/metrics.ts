/**
 * The API's Prometheus metrics (prom-client), one registry per server. Route modules record into these;
 * `/metrics` (api/routes/metrics.ts) serves them with the per-site gauges read at scrape time.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ApiMetrics {
  registry: Registry;
  /** Events stored by `POST /v1/events` (new, duplicates ignored). */
  eventsIngested: Counter<'result'>;
  /** Lines refused by `POST /v1/events`, by the refused field (`ts`, `site`, `json`, …). */
  eventsRejected: Counter<'field'>;
  /** Request latency by route and status class. */
  requestSeconds: Histogram<'method' | 'route' | 'status'>;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'th_api_process_' });
  return {
    registry,
    eventsIngested: new Counter({ name: 'th_events_ingested_total', help: 'Events accepted by POST /v1/events (result: inserted or duplicate).', labelNames: ['result'], registers: [registry] }),
    eventsRejected: new Counter({ name: 'th_events_rejected_total', help: 'Event lines refused by POST /v1/events, by the field refused.', labelNames: ['field'], registers: [registry] }),
    requestSeconds: new Histogram({
      name: 'th_api_request_duration_seconds',
      help: 'API request latency, by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
