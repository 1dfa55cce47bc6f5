/**
 * Events in: `POST /v1/events` (scope `ingest`; docs/api.md, "Events in"). NDJSON or a JSON array, optionally
 * gzip-compressed; validated and classified exactly as `target-health ingest` does, the valid events
 * stored in one transaction before the answer goes out, every refused line answered with its index and
 * the ingester's message. Idempotent by `eventId` (or the id derived from an event's content).
 *
 * Statuses: 200 when at least one event was valid (stored now or already stored) — refused lines, if
 * any, are listed in `rejected`; 400 when nothing in the body was valid (nothing written), with the same
 * listing; 413 over the body limit (after decompression); 415 for another media type or encoding;
 * 503 when the database failed (nothing or part of the batch stored: send the same batch again).
 */
import { z } from 'zod';
import { createIngester } from '../../db/signal-store';
import { eventSchema } from '@target-health/crawler/events/event-schema';
import { sendStoreUnavailable, STORE_RETRY_AFTER_S } from '../errors';
import {
  decodeJsonArray,
  decodeNdjsonLines,
  EVENT_MEDIA_TYPES,
  eventsResultSchema,
  ingestBody,
  JSON_TYPE,
  rejectionField,
  type Decoded,
  type EventsResult,
} from '../events-batch';
import { BodyError, gunzipWithin, mediaTypeOf, requireEncoding, requireMediaType } from '../request-body';
import { IngestThreads } from '../ingest-threads';
import { InboxDrainer } from '../inbox-drainer';
import type { RouteContext } from '../server';

const errorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const invalidBatchSchema = errorSchema.extend(eventsResultSchema.shape);

export async function registerEventsRoutes({
  app,
  pool,
  logger,
  metrics,
  settings,
  ingestThreads,
}: RouteContext): Promise<void> {
  // One ingester for the server: its per-site classification contexts are cached across requests.
  const ingester = createIngester(pool, { minuteDays: settings.TARGET_HEALTH_MINUTE_DAYS });
  // NDJSON bodies are parsed and stored by worker threads when the server has them (server/api/ingest-threads.ts).
  const threads = ingestThreads === undefined ? undefined : new IngestThreads(ingestThreads);
  // The batches crawlers' postgresSink writes to the inbox are stored the same way (server/api/inbox-drainer.ts).
  const drainer = new InboxDrainer({
    pool,
    logger: logger.child({ component: 'inbox' }),
    store: (lines) => ingestBody(ingester, { lines }, Date.now(), threads),
    metrics: {
      batches: (result) => metrics.inboxBatches.inc({ result }),
      events: (result, n) => metrics.inboxEvents.inc({ result }, n),
      waited: (seconds) => metrics.inboxWaitSeconds.observe(seconds),
    },
  });
  app.addHook('onReady', (done) => {
    drainer.start();
    done();
  });
  // Before the threads: batches in flight finish (or roll back) first.
  app.addHook('onClose', () => drainer.close());
  if (threads !== undefined) app.addHook('onClose', () => threads.close());

  // Encapsulated: the raw-buffer parsers below apply to this route only.
  await app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser([...EVENT_MEDIA_TYPES], { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );

    scope.post<{ Body: Buffer | undefined }>(
      '/v1/events',
      {
        config: {
          scope: 'ingest',
          openapi: {
            summary:
              'Send request-outcome events (NDJSON or a JSON array, gzip accepted); answers once they are stored',
            description:
              'The body is a JSON array of events (`application/json`) or NDJSON, one event per line ' +
              '(`application/x-ndjson`), ' +
              ('optionally with `Content-Encoding: gzip`. Each event is validated and classified as ' +
                '`target-health ingest` does ') +
              ('(docs/events.md); valid ones are stored in one transaction before the answer, and every refused ' +
                'line is listed ') +
              ('with its 0-based index and one message per problem. Idempotent by `eventId`: a resent batch ' +
                'stores nothing twice.'),
            tag: 'events',
            body: z.array(eventSchema()),
            requestMediaTypes: ['application/x-ndjson'],
            responses: {
              200: {
                description:
                  'At least one event was valid: stored (inserted) or already stored (duplicates); refused ' +
                  'lines listed in rejected',
                schema: eventsResultSchema,
              },
              400: {
                description:
                  'Nothing in the body was valid (every line refused, or no events at all), or the body is not ' +
                  'a JSON array / valid gzip: nothing stored',
                schema: invalidBatchSchema,
              },
              401: { description: 'No token, or an unknown or revoked one', schema: errorSchema },
              403: { description: 'The token lacks the ingest scope', schema: errorSchema },
              413: {
                description:
                  'The body (once decompressed) is larger than TH_API_BODY_LIMIT: nothing stored; send smaller batches',
                schema: errorSchema,
              },
              415: {
                description:
                  'Content-Type other than application/x-ndjson or application/json, or Content-Encoding other ' +
                  'than gzip',
                schema: errorSchema,
              },
              429: { description: 'Rate limit of the token exceeded', schema: errorSchema },
              503: {
                description: 'The database failed: send the same batch again (nothing is stored twice)',
                schema: errorSchema,
              },
            },
          },
        },
        // Checked before a byte of the body is read; gzip undone here so the body limit counts decompressed bytes.
        preParsing: async (request, _reply, payload) => {
          requireMediaType(request.headers['content-type'], EVENT_MEDIA_TYPES);
          return requireEncoding(request.headers['content-encoding']) === 'gzip'
            ? gunzipWithin(payload, settings.TH_API_BODY_LIMIT)
            : payload;
        },
      },
      async (request, reply) => {
        const body = request.body ?? Buffer.alloc(0);
        const decoded: Decoded =
          mediaTypeOf(request.headers['content-type']) === JSON_TYPE
            ? { inputs: decodeJsonArray(body) }
            : { lines: await decodeNdjsonLines(body) };
        let result: EventsResult;
        try {
          result = await ingestBody(ingester, decoded, Date.now(), threads);
        } catch (err) {
          // Not the data's fault (connection lost, timeout, disk full, a lost ingest thread): the batch may
          // be partly stored; resending is safe.
          if (typeof (err as { code?: unknown }).code !== 'string') throw err;
          request.log.error({ err }, 'events: the database failed');
          return sendStoreUnavailable(
            reply,
            `database: the events could not be stored now; send the same batch again in ${STORE_RETRY_AFTER_S} ` +
              `s (nothing is stored twice)`,
          );
        }
        record(metrics, result);
        if (result.accepted > 0) return reply.code(200).send(result);
        if (result.rejected.length === 0) {
          throw new BodyError(
            400,
            'empty_batch',
            'body: no events; send a JSON array of events, or NDJSON with one event per line',
          );
        }
        const first = result.rejected[0]!;
        const message =
          `events: all ${result.rejected.length} refused, nothing stored; first at index ${first.index}: ` +
          `${first.errors[0]}`;
        return reply.code(400).send({ error: { code: 'invalid_events', message }, ...result });
      },
    );
    done();
  });
}

function record(metrics: RouteContext['metrics'], result: EventsResult): void {
  if (result.inserted > 0) metrics.eventsIngested.inc({ result: 'inserted' }, result.inserted);
  if (result.duplicates > 0) metrics.eventsIngested.inc({ result: 'duplicate' }, result.duplicates);
  // A line refused for several fields counts once under each of them (once for two problems in one field).
  for (const r of result.rejected)
    for (const field of new Set(r.errors.map(rejectionField))) metrics.eventsRejected.inc({ field });
}
