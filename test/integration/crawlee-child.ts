/**
 * A crawl with the adapter in a child process (Crawlee loads its HTTP client by dynamic import(), which
 * jest's module sandbox refuses): the test sends one
 * `run` message, may send `controls` changes while it runs (each answered by `controls-applied`, with
 * the time the crawler had it), and gets `progress` (the adapter's counts) and a final `done` message with the
 * crawler's statistics and every event the recorder stored.
 */
import { CheerioCrawler, type CheerioCrawlerOptions } from '@crawlee/cheerio';
import { log, ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler, type HttpCrawlerOptions } from '@crawlee/http';
import { PlaywrightCrawler, type PlaywrightCrawlerOptions } from '@crawlee/playwright';
import { chromium } from 'playwright-core';
import { isDroppedByTargetHealth, targetHealth } from '@target-health/crawler/crawlee';
import type { SiteControls } from '@target-health/crawler/controls/types';
import { createRecorder } from '@target-health/crawler/recorder/recorder';
import { memoryControls, memorySink, scratchConfiguration } from './crawlee-site';

export interface RunMessage {
  type: 'run';
  crawler: 'cheerio' | 'http' | 'playwright';
  /** For `playwright`: the Chromium to launch (stack/chromium.ts). */
  browser?: { executablePath: string; args: string[] };
  proxyUrl: string;
  requests: Array<string | { url: string; label?: string; userData?: Record<string, unknown> }>;
  controls?: Array<Partial<SiteControls> & { site: string }>;
  adapter?: { pauseDelayMs?: number; gateWaitMs?: number; customRoute?: boolean };
  crawlerOptions?: { maxRequestRetries?: number; maxConcurrency?: number; minConcurrency?: number };
}
export interface ControlsMessage {
  type: 'controls';
  site: string;
  change: Partial<SiteControls>;
}

log.setLevel(log.LEVELS.ERROR);
const controls = memoryControls();
const send = (m: unknown) => process.send?.(m);

process.on('message', (m: RunMessage | ControlsMessage) => {
  if (m.type === 'controls') {
    controls.set(m.site, m.change);
    // When the crawler had the change: what "after the pause was received" is measured from.
    send({ type: 'controls-applied', site: m.site, at: Date.now() });
  } else
    void run(m).catch((err: unknown) =>
      send({ type: 'error', message: String(err instanceof Error ? err.stack : err) }),
    );
});

async function run(m: RunMessage): Promise<void> {
  for (const c of m.controls ?? []) controls.set(c.site, c);
  const sink = memorySink();
  const recorder = createRecorder({ sink, flushIntervalMs: 20 });
  const th = targetHealth({
    recorder,
    controls,
    ...(m.adapter?.pauseDelayMs !== undefined ? { pauseDelayMs: m.adapter.pauseDelayMs } : {}),
    ...(m.adapter?.gateWaitMs !== undefined ? { gateWaitMs: m.adapter.gateWaitMs } : {}),
    ...(m.adapter?.customRoute ? { routeOf: () => ({ pool: 'custom-pool' }) } : {}),
  });
  const { config, cleanup } = scratchConfiguration();
  const seen = {
    userPre: 0,
    userPost: 0,
    retriedSessionsUsable: [] as boolean[],
    failed: [] as string[],
    drops: [] as boolean[],
  };
  const progress = setInterval(() => send({ type: 'progress', stats: th.stats() }), 25);
  const common = {
    proxyConfiguration: new ProxyConfiguration({ proxyUrls: [m.proxyUrl] }),
    ...m.crawlerOptions,
    preNavigationHooks: [() => void (seen.userPre += 1)],
    postNavigationHooks: [() => void (seen.userPost += 1)],
    errorHandler: (ctx: { request: { url: string }; session?: { isUsable(): boolean } }) => {
      if (ctx.request.url.includes('/challenge')) seen.retriedSessionsUsable.push(ctx.session?.isUsable() ?? true);
    },
    failedRequestHandler: (ctx: { request: { url: string } }, err: Error) => {
      seen.failed.push(ctx.request.url);
      seen.drops.push(isDroppedByTargetHealth(err));
    },
  };
  const crawler =
    m.crawler === 'playwright'
      ? new PlaywrightCrawler(
          th.crawlerOptions<PlaywrightCrawlerOptions>(
            {
              ...common,
              launchContext: {
                launcher: chromium,
                launchOptions: {
                  headless: true,
                  executablePath: m.browser?.executablePath,
                  args: m.browser?.args ?? [],
                },
              },
              requestHandler: async (ctx) => {
                // @crawlee/playwright types its page from the `playwright` package, not installed here (playwright-core
                // is).
                const page = ctx.page as unknown as { content(): Promise<string> };
                const price = (await page.content()).includes('class="price"');
                th.extraction(ctx, price ? { result: 'ok', validRecords: 1 } : { result: 'empty', validRecords: 0 });
              },
            },
            'browser',
          ),
          config,
        )
      : m.crawler === 'cheerio'
        ? new CheerioCrawler(
            th.crawlerOptions<CheerioCrawlerOptions>({
              ...common,
              requestHandler: (ctx) => {
                const price = ctx.$('.price').text();
                th.extraction(
                  ctx,
                  price
                    ? { result: 'ok', validRecords: 1 }
                    : { result: 'missing_fields', missingFields: ['price'], validRecords: 0 },
                );
              },
            }),
            config,
          )
        : new HttpCrawler(
            th.crawlerOptions<HttpCrawlerOptions>({
              ...common,
              requestHandler: (ctx) => th.extraction(ctx, { result: 'ok', validRecords: ctx.body.length > 0 ? 1 : 0 }),
            }),
            config,
          );
  const crawlerStats = await crawler.run(m.requests);
  await recorder.close();
  clearInterval(progress);
  cleanup();
  send({
    type: 'done',
    crawlerStats: { requestsFinished: crawlerStats.requestsFinished, requestsFailed: crawlerStats.requestsFailed },
    events: sink.events,
    stats: th.stats(),
    seen,
  });
}
