/**
 * The Crawlee adapter with real CheerioCrawler and HttpCrawler crawls through a forward proxy against a
 * local site, recording into a real recorder: every attempt recorded once (status, latency, body,
 * route, retries, extraction), challenge bodies kept and their sessions retired, 5xx bodies kept and
 * retried as Crawlee would, network errors mapped; pause defers (nothing reaches the site, canaries
 * excepted) and resumes, also for requests already waiting at the concurrency gate when the pause comes;
 * concurrencyLimit=1 holds one request in flight, stopped drops and counts.
 * Assertions use the crawler's own statistics and the site's access counts. Crawls run in a child
 * process (crawlee-child.ts: Crawlee loads its HTTP client by dynamic import, which jest refuses).
 */
import { crawl, stopCrawls } from './crawlee-crawl';
import { startTestProxy, startTestSite, waitFor, type TestProxy, type TestSite } from './crawlee-site';

let site: TestSite;
let proxy: TestProxy;
beforeAll(async () => {
  site = await startTestSite();
  proxy = await startTestProxy(site.port);
});
afterAll(async () => {
  await proxy.close();
  await site.close();
  stopCrawls();
});

const eventsOf = (events: Record<string, unknown>[], host: string) => events.filter((e) => e.site === host);

test(
  'CheerioCrawler: every attempt recorded once, challenge bodies kept and sessions retired, 5xx bodies kept and ' +
    'retried',
  async () => {
    const host = 'shop-cheerio.test';
    const ok = Array.from({ length: 8 }, (_, i) => ({ url: `http://${host}/ok/${i}`, label: 'product' }));
    const bad = [`http://${host}/challenge/1`, `http://${host}/challenge/2`, `http://${host}/error/1`];
    const {
      crawlerStats,
      events: all,
      stats,
      seen,
    } = await crawl({
      crawler: 'cheerio',
      proxyUrl: proxy.url('residential-de'),
      requests: [...ok, ...bad],
      crawlerOptions: { maxRequestRetries: 1, maxConcurrency: 2 },
    }).done;

    // The crawler's own view: 8 fine, 3 failed after their one retry.
    expect(crawlerStats).toEqual({ requestsFinished: 8, requestsFailed: 3 });
    expect(seen.failed.sort()).toEqual([...bad].sort());
    // Every attempt that reached the site was recorded, once: 8 + 3 × 2 attempts.
    const events = eventsOf(all, host);
    expect(site.counts(host).hits).toBe(14);
    expect(events).toHaveLength(14);
    expect(stats).toMatchObject({
      recorded: 14,
      sessionsRetired: 4,
      failedAfterRecording: 6,
      notKept: 0,
      unrecordable: 0,
    });
    // The user's own hooks still run, once per attempt.
    expect(seen.userPre).toBe(14);
    expect(seen.userPost).toBe(14);

    for (const e of events) {
      expect(e.route).toEqual({ pool: 'residential', country: 'DE' });
      expect(e.latencyMs as number).toBeGreaterThan(0);
    }
    const okEvents = events.filter((e) => e.status === 200);
    expect(okEvents).toHaveLength(8);
    for (const e of okEvents) {
      expect(e).toMatchObject({ pageType: 'product', retries: 0, extraction: { result: 'ok', validRecords: 1 } });
      expect(e.title).toMatch(/^Product \/ok\/\d$/);
      expect(e.bodySample).toContain('class="price"');
      expect(e.bytes).toBe(Buffer.byteLength(e.bodySample as string));
    }
    // The challenge body survived (Crawlee's default throws on 403 before any body is read).
    const challenges = events.filter((e) => e.status === 403);
    expect(challenges).toHaveLength(4);
    expect(challenges.map((e) => e.retries).sort()).toEqual([0, 0, 1, 1]);
    for (const e of challenges) {
      expect(e.bodySample).toContain('challenge-platform');
      expect(e.headers).toEqual({ 'cf-mitigated': 'challenge', server: 'cloudflare' });
      expect(e.extraction).toBeUndefined(); // the user's handler did not run on a block
    }
    // The session that got the challenge was retired before the retry.
    expect(seen.retriedSessionsUsable).toEqual([false, false]);
    // A 5xx body is kept whole (Crawlee keeps ~100 characters in an error message).
    const errors = events.filter((e) => e.status === 500);
    expect(errors).toHaveLength(2);
    for (const e of errors) expect((e.bodySample as string).length).toBeGreaterThan(300);
  },
);

test('HttpCrawler: a socket reset is recorded as connection_reset; a custom routeOf', async () => {
  const host = 'shop-http.test';
  const { crawlerStats, events: all } = await crawl({
    crawler: 'http',
    proxyUrl: proxy.url('zone-datacenter-country-us'),
    adapter: { customRoute: true },
    requests: [`http://${host}/ok/1`, `http://${host}/reset/1`],
    crawlerOptions: { maxRequestRetries: 0 },
  }).done;
  expect(crawlerStats).toEqual({ requestsFinished: 1, requestsFailed: 1 });
  const events = eventsOf(all, host);
  expect(events).toHaveLength(2);
  const reset = events.find((e) => e.status === undefined);
  expect(reset).toMatchObject({ networkError: 'connection_reset', route: { pool: 'custom-pool' } });
  expect(reset).not.toHaveProperty('bodySample');
  const fine = events.find((e) => e.status === 200);
  expect(fine).toMatchObject({ extraction: { result: 'ok', validRecords: 1 }, route: { pool: 'custom-pool' } });
  expect(fine?.bodySample).toContain('<title>Product /ok/1</title>');
});

test(
  'a bare 403 (no Content-Type, no body: Crawlee refuses it before any hook of ours) is recorded as a 403, its ' +
    'session retired',
  async () => {
    const host = 'wall-http.test';
    const { events: all, stats } = await crawl({
      crawler: 'cheerio',
      proxyUrl: proxy.url('residential-de'),
      requests: [`http://${host}/bare403/1`, `http://${host}/ok/1`],
      crawlerOptions: { maxRequestRetries: 0 },
    }).done;
    const events = eventsOf(all, host);
    expect(events).toHaveLength(2);
    const wall = events.find((e) => e.status === 403);
    expect(wall).toMatchObject({
      status: 403,
      headers: { server: 'nginx' },
      route: { pool: 'residential', country: 'DE' },
    });
    expect(wall).not.toHaveProperty('networkError');
    expect(stats).toMatchObject({ recorded: 2, sessionsRetired: 1 });
  },
);

test(
  'pause: nothing but the canary reaches a paused site; its requests are crawled after resume, none failed or ' +
    'retried',
  async () => {
    const paused = 'paused.test';
    const other = 'other.test';
    const run = crawl({
      crawler: 'http',
      proxyUrl: proxy.url('residential-de'),
      controls: [
        { site: paused, paused: true, canaryOnly: true, band: 'resisting', reason: 'challenge rate 5x baseline' },
      ],
      adapter: { pauseDelayMs: 200 },
      requests: [
        ...Array.from({ length: 5 }, (_, i) => `http://${paused}/ok/${i}`),
        { url: `http://${paused}/ok/canary`, userData: { targetHealthCanary: true } },
        ...Array.from({ length: 5 }, (_, i) => `http://${other}/ok/${i}`),
      ],
      crawlerOptions: { maxConcurrency: 3, maxRequestRetries: 1 },
    });

    // Held: the other site is crawled, the canary goes through, the paused site's requests cycle back.
    await waitFor(
      'the other site crawled and the paused requests deferred twice over',
      () => site.counts(other).hits === 5 && (run.stats()?.deferredByPause ?? 0) >= 10,
    );
    expect(site.counts(paused).hits).toBe(1);

    run.controls(paused, { paused: false, canaryOnly: false, band: 'degrading' });
    const { crawlerStats, events: all } = await run.done;
    expect(site.counts(paused).hits).toBe(6);
    expect(crawlerStats).toEqual({ requestsFinished: 11, requestsFailed: 0 });
    const events = eventsOf(all, paused);
    expect(events).toHaveLength(6);
    // Deferrals are not retries: every event says retries 0.
    expect(events.map((e) => e.retries)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(events.filter((e) => e.canary === true)).toHaveLength(1);
  },
);

test(
  'a pause heard while requests wait at the concurrency gate: none of them reaches the site; after each resume ' +
    'the crawl goes on, none failed',
  async () => {
    const gated = 'gated.test';
    const pageMs = 600;
    const run = crawl({
      crawler: 'cheerio',
      proxyUrl: proxy.url('residential-de'),
      controls: [{ site: gated, concurrencyLimit: 1, band: 'degrading' }],
      // Long gate waits: the queue stays at the gate (not put back by the gate's own timeout) across a pause.
      adapter: { pauseDelayMs: 300, gateWaitMs: 20_000 },
      requests: Array.from({ length: 20 }, (_, i) => `http://${gated}/ok/${i}?delay=${pageMs}`),
      crawlerOptions: { minConcurrency: 8, maxConcurrency: 8, maxRequestRetries: 0 },
    });
    const figures: string[] = [];
    for (let pause = 1; pause <= 3; pause++) {
      // One request at the site, the rest of the crawler's eight at the gate behind it.
      const before = site.counts(gated).hits;
      await waitFor(
        `pause ${pause}: a request in flight`,
        () => site.counts(gated).inFlight === 1 && site.counts(gated).hits > before,
      );
      const deferredBefore = run.stats()?.deferredOnDeparture ?? 0;
      const heardAt = await run.applyControls(gated, {
        paused: true,
        canaryOnly: true,
        band: 'resisting',
        reason: `pause ${pause}`,
      });
      // The request in flight ends and frees its place: the gate lets its queue go — each must be put back.
      await waitFor(
        `pause ${pause}: the queue at the gate put back (or a request sent)`,
        () =>
          site.arrivals(gated).some((t) => t > heardAt) ||
          (run.stats()?.deferredOnDeparture ?? 0) - deferredBefore >= 3,
      );
      const after = site.arrivals(gated).filter((t) => t > heardAt);
      figures.push(
        `pause ${pause}: ${after.length} after (${after.map((t) => `+${t - heardAt} ms`).join(', ') || 'none'}), ` +
          `put back on departure ${(run.stats()?.deferredOnDeparture ?? 0) - deferredBefore}`,
      );
      expect({ pause, reachedAfterPause: after.map((t) => t - heardAt) }).toEqual({ pause, reachedAfterPause: [] });
      await run.applyControls(gated, {
        paused: false,
        canaryOnly: false,
        band: 'degrading',
        reason: `resume ${pause}`,
      });
    }
    process.stderr.write(`[crawlee gate] ${figures.join('; ')}\n`);
    const { crawlerStats, events } = await run.done;
    expect(crawlerStats).toEqual({ requestsFinished: 20, requestsFailed: 0 });
    expect(site.counts(gated).hits).toBe(20);
    expect(site.counts(gated).maxInFlight).toBe(1);
    expect(eventsOf(events, gated).map((e) => e.retries)).toEqual(Array.from({ length: 20 }, () => 0));
  },
);

test('concurrencyLimit=1 keeps one request in flight to the site while the crawler runs four', async () => {
  const slow = 'slow.test';
  const { crawlerStats, stats } = await crawl({
    crawler: 'http',
    proxyUrl: proxy.url('residential-de'),
    controls: [{ site: slow, concurrencyLimit: 1, band: 'degrading' }],
    adapter: { gateWaitMs: 2_000 },
    requests: Array.from({ length: 8 }, (_, i) => `http://${slow}/ok/${i}?delay=120`),
    crawlerOptions: { minConcurrency: 4, maxConcurrency: 4 },
  }).done;
  expect(crawlerStats).toEqual({ requestsFinished: 8, requestsFailed: 0 });
  expect(site.counts(slow).hits).toBe(8);
  expect(site.counts(slow).maxInFlight).toBe(1);
  expect(stats.gateWaits).toBeGreaterThan(0);
});

test('stopped: requests are dropped and counted, none reaches the site, failedRequestHandler is told', async () => {
  const stopped = 'stopped.test';
  const { crawlerStats, events, stats, seen } = await crawl({
    crawler: 'cheerio',
    proxyUrl: proxy.url('residential-de'),
    controls: [{ site: stopped, band: 'stopped', paused: true, reason: 'stopped by a person' }],
    requests: [1, 2, 3].map((i) => `http://${stopped}/ok/${i}`),
  }).done;
  expect(site.counts(stopped).hits).toBe(0);
  expect(crawlerStats).toEqual({ requestsFinished: 0, requestsFailed: 3 });
  expect(seen.drops).toEqual([true, true, true]);
  expect(stats.droppedByStop).toBe(3);
  expect(eventsOf(events, stopped)).toHaveLength(0);
});
