/**
 * Controls out (docs/api.md, "Controls"): what a crawler obeys for a site, over HTTP.
 *   GET /v1/sites/{site}/controls      — the record, `ETag` = its version; `If-None-Match` → 304 from
 *                                        memory; long-poll with `?after=<version>&wait=30s`
 *   GET /v1/controls/stream            — Server-Sent Events for a fleet, resumable with `Last-Event-ID`
 * Both are served from the controls feed (server/api/controls-feed.ts): PostgreSQL announces every change, so a
 * poll costs no database round trip and a pause reaches a stream as soon as it is committed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Gauge } from 'prom-client';
import { z } from 'zod';
import { controlsSchema } from '../../../core/control/controls';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { controlsOf, type SiteControlsRecord } from '../../db/controls';
import { normaliseSite, tryNormaliseSite } from '@target-health/crawler/events/site';
import { ControlsFeed, type ControlsChange } from '../controls-feed';
import { SentVersions } from '../sent-versions';
import { sendError } from '../errors';
import type { RouteContext } from '../server';
import { SSE_HEADERS, SseConnection } from '../sse';

declare module 'fastify' {
  interface FastifyInstance {
    /** The controls cache of this server (its status is read by tests and the benchmark). */
    controlsFeed: ControlsFeed;
  }
}

/** Longest long-poll a client may ask for. */
export const MAX_WAIT_MS = 60_000;
/** Most sites one stream may filter on. */
export const MAX_STREAM_SITES = 10_000;
/** What an EventSource waits before reconnecting after the connection drops. */
const SSE_RETRY_MS = 1_000;

/** The answer of the controls routes and the `data` of a stream's `controls` event. */
export const controlsBodySchema = controlsSchema().extend({
  site: z.string(),
  /** Grows by one with every change; the ETag is this number, quoted. */
  version: z.int().min(1),
  updatedAt: z.iso.datetime(),
});
export type ControlsBody = z.output<typeof controlsBodySchema>;

export const snapshotBodySchema = z.object({ sites: z.array(controlsBodySchema) });

const siteName = z.string().superRefine((value, ctx) => {
  const r = tryNormaliseSite(value);
  if (!r.ok) ctx.addIssue({ code: 'custom', message: r.error.message });
});

export const controlsParamsSchema = z.object({ site: siteName });

const WAIT_PATTERN = /^(\d{1,6})(ms|s)?$/;
/** `30s`, `500ms`, or bare seconds (`30`). */
function waitMsOf(text: string): number | undefined {
  const m = WAIT_PATTERN.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === 'ms' ? 1 : 1_000);
}

export const controlsQuerySchema = z.strictObject({
  after: z
    .string()
    .regex(/^\d{1,15}$/, { error: 'must be a version number (the `version` of the controls you hold), e.g. after=41' })
    .optional(),
  wait: z
    .string()
    .refine(
      (v) => {
        const ms = waitMsOf(v);
        return ms !== undefined && ms <= MAX_WAIT_MS;
      },
      { error: `must be a duration of at most ${MAX_WAIT_MS / 1000}s, e.g. wait=30s or wait=500ms` },
    )
    .optional(),
});

export const streamQuerySchema = z.strictObject({
  site: z
    .union([
      siteName,
      z
        .array(siteName)
        .max(MAX_STREAM_SITES, { error: `at most ${MAX_STREAM_SITES} sites per stream; open several streams` }),
    ])
    .optional(),
});

export function controlsBody(record: SiteControlsRecord): ControlsBody {
  return {
    site: record.site,
    ...controlsOf(record),
    version: record.version,
    updatedAt: record.updatedAt.toISOString(),
  };
}

const etagOf = (version: number): string => `"${version}"`;

/** If-None-Match holds this version's tag (weak comparison, as RFC 9110 asks for If-None-Match), or `*`. */
function etagMatches(header: string | undefined, version: number): boolean {
  if (header === undefined) return false;
  const tag = etagOf(version);
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '') === tag;
  });
}

/** The version named by the first tag of If-None-Match, for a long-poll without `after`. */
function versionOfEtag(header: string | undefined): number | undefined {
  const m = header === undefined ? null : /^\s*(?:W\/)?"(\d{1,15})"/.exec(header);
  return m ? Number(m[1]) : undefined;
}

function badRequest(reply: FastifyReply, error: z.ZodError): FastifyReply {
  return sendError(reply, 400, 'bad_request', formatIssues(error));
}

export async function registerControlsRoutes({ app, pool, logger, metrics }: RouteContext): Promise<void> {
  const feed = new ControlsFeed({ pool, logger });
  await feed.start();
  app.decorate('controlsFeed', feed);
  const streams = new Set<SseConnection>();
  /** Long-polls in progress: answered at once when the server closes. */
  const waiters = new Set<() => void>();

  new Gauge({
    name: 'th_api_controls_streams',
    help: 'Open controls event streams (GET /v1/controls/stream).',
    registers: [metrics.registry],
    collect() {
      this.set(streams.size);
    },
  });
  new Gauge({
    name: 'th_api_controls_feed_live',
    help: '1 when the controls cache is listening to PostgreSQL and trusted, else 0.',
    registers: [metrics.registry],
    collect() {
      this.set(feed.status().live ? 1 : 0);
    },
  });

  // Open streams and long-polls would keep the server from closing: end them first.
  app.addHook('preClose', (done) => {
    for (const finish of [...waiters]) finish();
    for (const sse of [...streams]) sse.end();
    done();
  });
  app.addHook('onClose', async () => feed.close());

  const ok = (reply: FastifyReply, record: SiteControlsRecord) =>
    reply.header('etag', etagOf(record.version)).header('cache-control', 'no-cache').send(controlsBody(record));
  const notModified = (reply: FastifyReply, record: SiteControlsRecord) =>
    reply.code(304).header('etag', etagOf(record.version)).header('cache-control', 'no-cache').send();

  /** Resolves with the record once its version differs from `after`, or null at the deadline (or close). */
  function waitForChange(
    site: string,
    after: number,
    waitMs: number,
    reply: FastifyReply,
  ): Promise<SiteControlsRecord | null> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (record: SiteControlsRecord | null, serverClosing = false) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unsubscribe();
        waiters.delete(onServerClose);
        reply.raw.off('close', onClientGone);
        // The server is closing: this connection must not be kept alive after the answer, or closing waits for it.
        if (serverClosing) void reply.header('connection', 'close');
        resolve(record);
      };
      const onServerClose = () => finish(null, true);
      const onClientGone = () => finish(null);
      const unsubscribe = feed.onSite(site, (record) => {
        if (record.version !== after) finish(record);
      });
      const timer = setTimeout(() => finish(null), waitMs);
      waiters.add(onServerClose);
      reply.raw.once('close', onClientGone);
    });
  }

  app.get(
    '/v1/sites/:site/controls',
    {
      config: {
        scope: 'read',
        holdsOpen: true,
        openapi: {
          summary: "A site's controls (what its crawler obeys), with ETag and an optional long-poll",
          description:
            'The ETag is the version, quoted. Send If-None-Match with it: 304 while nothing changed (answered ' +
            'from memory). ' +
            ('Long-poll: `?after=<version>&wait=30s` answers 200 as soon as the version differs from `after`, ' +
              'else 304 at the deadline (wait ≤ 60s; ') +
            'without `after`, the version of If-None-Match is used). `after` alone answers at once.',
          tag: 'controls',
          params: controlsParamsSchema,
          query: controlsQuerySchema,
          responses: {
            200: { description: 'The controls (newer than `after` / If-None-Match)', schema: controlsBodySchema },
            304: { description: 'Not modified: the version you hold is current (ETag header: the current version)' },
            400: { description: 'A bad site name, `after` or `wait`' },
            401: { description: 'No valid token' },
            403: { description: 'The token lacks the `read` scope' },
            404: { description: 'The site has no controls yet (its loop writes them on its first tick)' },
          },
        },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const params = controlsParamsSchema.safeParse(request.params);
      if (!params.success) return badRequest(reply, params.error);
      const query = controlsQuerySchema.safeParse(request.query);
      if (!query.success) return badRequest(reply, query.error);
      const site = normaliseSite(params.data.site);
      const ifNoneMatch = request.headers['if-none-match'];
      const waitMs = query.data.wait === undefined ? 0 : waitMsOf(query.data.wait)!;
      let after = query.data.after === undefined ? undefined : Number(query.data.after);
      if (after === undefined && waitMs > 0) {
        after = versionOfEtag(ifNoneMatch);
        if (after === undefined)
          return sendError(
            reply,
            400,
            'bad_request',
            'after: required with wait — the version of the controls you hold (or send If-None-Match with their ETag)',
          );
      }

      // The hot path: a cached site is answered without awaiting anything.
      const peeked = feed.peek(site);
      const record = peeked !== undefined ? peeked : await feed.get(site);
      if (record === null) {
        return sendError(
          reply,
          404,
          'not_found',
          `site: no controls recorded for ${site} yet; its loop writes them on its first tick (start it with ` +
            `\`target-health start ${site}\`)`,
        );
      }
      if (after === undefined)
        return etagMatches(ifNoneMatch, record.version) ? notModified(reply, record) : ok(reply, record);
      // A version other than the current one (older, or from a database since rebuilt): the client must catch up now.
      if (record.version !== after) return ok(reply, record);
      if (waitMs === 0) return notModified(reply, record);
      const next = await waitForChange(site, after, waitMs, reply);
      return next === null ? notModified(reply, feed.peek(site) ?? record) : ok(reply, next);
    },
  );

  app.get(
    '/v1/controls/stream',
    {
      config: {
        scope: 'read',
        holdsOpen: true,
        openapi: {
          summary:
            'Server-Sent Events: every change of controls for the fleet (or the sites named), resumable with ' +
            'Last-Event-ID',
          description:
            'First a `snapshot` event (data: {"sites": [controls…]}) — unless `Last-Event-ID` names an event ' +
            'this server still holds, then the events after it are replayed. ' +
            ('Then one `controls` event per change (id: a growing sequence, data: the controls as GET ' +
              '/v1/sites/{site}/controls answers). ') +
            ('A comment line every 15 s keeps the connection alive. Filter with `?site=a&site=b`. Apply an ' +
              'event only when its version is higher than the one you hold.'),
          tag: 'controls',
          query: streamQuerySchema,
          responses: {
            200: {
              description: 'An event stream (text/event-stream): `snapshot` and `controls` events',
              mediaType: 'text/event-stream',
            },
            400: { description: 'A bad site name in the filter' },
            401: { description: 'No valid token' },
            403: { description: 'The token lacks the `read` scope' },
          },
        },
      },
    },
    (request: FastifyRequest, reply: FastifyReply) => {
      const query = streamQuerySchema.safeParse(request.query);
      if (!query.success) return badRequest(reply, query.error);
      const raw = query.data.site;
      const sites =
        raw === undefined ? null : [...new Set((typeof raw === 'string' ? [raw] : raw).map((s) => normaliseSite(s)))];
      const wanted = sites === null ? null : new Set(sites);
      const lastIdHeader = request.headers['last-event-id'];
      const lastId =
        typeof lastIdHeader === 'string' && /^\d{1,16}$/.test(lastIdHeader.trim())
          ? Number(lastIdHeader.trim())
          : undefined;

      let unsubscribeChange: () => void = () => undefined;
      let unsubscribeGap: () => void = () => undefined;
      const sse = new SseConnection({
        onClose: () => {
          unsubscribeChange();
          unsubscribeGap();
          streams.delete(sse);
        },
      });
      streams.add(sse);

      // Changes are queued while a snapshot is read, then sent after it; none is sent twice (by seq), and
      // no version the client already holds is sent again (server/api/sent-versions.ts).
      let lastSent = 0;
      const versions = new SentVersions();
      let replaying = true;
      const queued: ControlsChange[] = [];
      const send = (change: ControlsChange) => {
        if (change.seq <= lastSent) return;
        lastSent = change.seq;
        if (wanted !== null && !wanted.has(change.site)) return;
        if (!versions.take(change.site, change.record.version)) return;
        sse.event('controls', change.seq, JSON.stringify(controlsBody(change.record)));
      };
      const snapshot = async () => {
        replaying = true;
        try {
          const { seq, records } = await feed.snapshot(sites);
          if (sse.closed) return;
          sse.event('snapshot', seq, JSON.stringify({ sites: records.map(controlsBody) }));
          versions.reset(records);
          lastSent = Math.max(lastSent, seq);
          for (const change of queued.splice(0)) send(change);
          replaying = false;
        } catch (err) {
          request.log.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'controls stream: snapshot failed; closing the stream (the client reconnects)',
          );
          sse.end();
        }
      };
      let chain = Promise.resolve();
      unsubscribeChange = feed.onChange((change) => (replaying ? queued.push(change) : send(change)));
      unsubscribeGap = feed.onGap(() => {
        chain = chain.then(snapshot);
      });

      void reply.code(200).headers(SSE_HEADERS).send(sse.stream);
      sse.retry(SSE_RETRY_MS);
      const resume = lastId === undefined ? ({ kind: 'gap' } as const) : feed.since(lastId);
      if (resume.kind === 'events') {
        lastSent = lastId!;
        for (const change of resume.events) send(change);
        replaying = false;
      } else {
        chain = chain.then(snapshot);
      }
      return reply;
    },
  );
}
