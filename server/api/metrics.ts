/**
 * The API's Prometheus metrics (prom-client), one registry per server. Route modules record into these;
 * `/metrics` (server/api/routes/metrics.ts) serves them with the per-site gauges read at scrape time.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ApiMetrics {
  registry: Registry;
  /** Events stored by `POST /v1/events` (new, duplicates ignored). */
  eventsIngested: Counter<'result'>;
  /** Lines refused by `POST /v1/events`, by the refused field (`ts`, `site`, `json`, …). */
  eventsRejected: Counter<'field'>;
  /**
   * Batches taken from the event inbox (server/api/inbox-drainer.ts): drained, or failed
   * (left in the inbox and retried).
   */
  inboxBatches: Counter<'result'>;
  /** Events of drained inbox batches: inserted, duplicate, or rejected by the store. */
  inboxEvents: Counter<'result'>;
  /** From a crawler's write into the inbox to its events stored. */
  inboxWaitSeconds: Histogram;
  /** Request latency by route and status class. */
  requestSeconds: Histogram<'method' | 'route' | 'status'>;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'th_api_process_' });
  return {
    registry,
    eventsIngested: new Counter({
      name: 'th_events_ingested_total',
      help: 'Events accepted by POST /v1/events (result: inserted or duplicate).',
      labelNames: ['result'],
      registers: [registry],
    }),
    eventsRejected: new Counter({
      name: 'th_events_rejected_total',
      help: 'Event lines refused by POST /v1/events, by the field refused.',
      labelNames: ['field'],
      registers: [registry],
    }),
    inboxBatches: new Counter({
      name: 'th_inbox_batches_total',
      help: 'Event inbox batches taken by the drainer (result: drained, or failed and left for a retry).',
      labelNames: ['result'],
      registers: [registry],
    }),
    inboxEvents: new Counter({
      name: 'th_inbox_events_total',
      help: 'Events of drained inbox batches (result: inserted, duplicate, or rejected by the store).',
      labelNames: ['result'],
      registers: [registry],
    }),
    inboxWaitSeconds: new Histogram({
      name: 'th_inbox_wait_seconds',
      help: "Seconds from a crawler's write into the event inbox to its events stored.",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
      registers: [registry],
    }),
    requestSeconds: new Histogram({
      name: 'th_api_request_duration_seconds',
      help: 'API request latency, by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
