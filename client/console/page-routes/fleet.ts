/**
 * The Fleet page and its live updates (docs/console.md, "Fleet", "Live updates"):
 *   GET /console/fleet?band=&site=&awaiting=true
 *                                       every site, most urgent first, filtered by a plain GET form
 *   GET /console/assets/fleet-live.js   the console's one script, static (../assets.ts)
 *   GET /console/fleet/stream?band=&site=&awaiting=true
 *                                       Server-Sent Events of the session: `fleet` events carrying the page's
 *                                       results as server-rendered HTML, `end` when the session ended
 * Both read the whole fleet through one snapshot per API (../fleet-snapshot.ts): the page answers from a read
 * at most REFRESH_MS old, and one hub (../fleet-hub.ts) refreshes it for every open stream at once.
 */
import { readFleet } from '../../../server/fleet/read-fleet';
import { SSE_HEADERS, SseConnection } from '../../../server/api/sse';
import '../../../server/api/routes/controls';
import { FLEET_LIVE_JS } from '../assets';
import { FleetHub, narrowFleet, REFRESH_MS, type FleetStream } from '../fleet-hub';
import { FleetSnapshot } from '../fleet-snapshot';
import { fleetPage } from '../pages/fleet';
import { fleetFilterOf, fleetQuery } from '../fleet-filter';
import { liveSessionHashes } from '../sessions';
import { hashSecret } from '../session-rules';
import type { ConsolePageRoutes } from './index';
import { doc } from './openapi-doc';

/** What a browser waits before reconnecting after the connection drops (a server restart). */
const RETRY_MS = 3_000;

export const registerFleetPage: ConsolePageRoutes = (app, ctx, guard) => {
  const { pool, temporal, logger } = ctx;
  const snapshot = new FleetSnapshot({
    readAll: async () => readFleet({ client: await temporal(), pool }, { bands: null, awaiting: false, site: [] }),
    // No read behind a request: every listing is one a request or an open stream asked for, and the API's close
    // waits for it (`settled`), so none outlives the Temporal connection.
    maxAgeMs: REFRESH_MS,
    staleMs: REFRESH_MS,
  });
  // Held for the API's life: the feed is always running, a listener costs nothing until a change.
  const stopInvalidating = app.controlsFeed.onChange(() => snapshot.invalidate());
  const hub = new FleetHub({
    readAll: () => snapshot.read(),
    liveSessions: (hashes) => liveSessionHashes(pool, hashes),
    onControlsChange: (listener) => app.controlsFeed.onChange(listener),
    logger: logger.child({ component: 'console' }),
  });
  // Open streams would keep the server from closing.
  app.addHook('preClose', async () => {
    hub.close();
    stopInvalidating();
    // A listing still running would otherwise go on over the Temporal connection the API closes next.
    await snapshot.settled();
  });

  app.get(
    '/console/fleet',
    { config: doc('The Fleet page: every site, most urgent first', { query: fleetQuery }) },
    async (request, reply) => {
      const found = await guard.sessionOf(request);
      if (found === null) return guard.toSignIn(reply);
      const { session } = found;
      // A bad filter (an edited URL) shows the whole fleet with a 400, never an error page without the form.
      const { ok, form, filter } = fleetFilterOf(request.query);
      const now = new Date();
      const kept = await snapshot.get();
      const fleet = narrowFleet(kept.fleet, filter, now);
      const stale = now.getTime() - kept.readAt >= REFRESH_MS;
      return guard.sendPage(
        reply,
        ok ? 200 : 400,
        fleetPage({
          fleet,
          form,
          who: session.principal.name,
          csrfToken: session.csrfToken,
          now,
          ...(stale ? { listedAt: new Date(kept.readAt) } : {}),
        }),
      );
    },
  );

  app.get(
    '/console/assets/fleet-live.js',
    {
      config: doc("The Fleet page's live-update script (static)", {
        responses: { 200: { description: 'JavaScript', mediaType: 'text/javascript' } },
      }),
    },
    (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache')
        .send(FLEET_LIVE_JS),
  );

  app.get(
    '/console/fleet/stream',
    {
      config: doc("The Fleet page's updates, as Server-Sent Events of the session", {
        query: fleetQuery,
        responses: {
          200: { description: '`fleet` events (the HTML of the results) and `end`', mediaType: 'text/event-stream' },
          303: { description: 'to the sign-in page (no live session)' },
        },
      }),
    },
    async (request, reply) => {
      const found = await guard.sessionOf(request);
      if (found === null) return guard.toSignIn(reply);
      const { filter } = fleetFilterOf(request.query);
      const stream: FleetStream = {
        sse: new SseConnection({ onClose: () => hub.remove(stream) }),
        filter,
        sessionHash: hashSecret(found.id).toString('hex'),
        seq: 0,
      };
      void reply.code(200).headers(SSE_HEADERS).send(stream.sse.stream);
      stream.sse.retry(RETRY_MS);
      hub.add(stream);
      return reply;
    },
  );
};
