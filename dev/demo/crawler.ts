/**
 * The demo's crawler: a real Crawlee `CheerioCrawler` with the Target Health adapter, crawling the
 * hostile site's hosts through the labelled proxies, for as long as it runs — as a price monitor does,
 * revisiting the catalogue over and over.
 *
 * Each host is crawled by a fixed number of *chains*: a handled page (or one given up after Crawlee's
 * retries) enqueues the next page of the same host. So a host always has that many requests in the
 * crawler, a paused host holds only those (the others keep their share of the crawler), and the
 * request rate a host gets is set by the site's answer time and by what the adapter admits: the
 * controls' `concurrencyLimit` while throttled, nothing but canaries while paused.
 *
 * Canaries: every `canaryEveryMs`, each host gets one request marked as a canary
 * (`userData.targetHealthCanary`, and `?th-canary=1` so the site's access log can tell it apart); the
 * adapter lets those through while a site is paused with `canaryOnly`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CheerioCrawler,
  Configuration,
  ProxyConfiguration,
  log,
  type CheerioCrawlerOptions,
  type CheerioCrawlingContext,
} from '@crawlee/cheerio';
import { targetHealth, type TargetHealth } from '@target-health/crawler/crawlee';
import type { ControlsView } from '@target-health/crawler/controls/types';
import type { Recorder } from '../../server/compat/recorder';

export interface DemoCrawlerOptions {
  /** The hosts' URLs: `urlOf(host, path)` (the hostile site's). */
  hosts: readonly string[];
  urlOf: (host: string, path: string) => string;
  /** Proxy URLs (`http://dc-de:x@127.0.0.1:port`): the route is read from the user name. */
  proxyUrls: readonly string[];
  recorder: Recorder;
  controls: ControlsView;
  /** Requests each host always has in the crawler (default 4). */
  chainsPerHost?: number;
  /** A canary per host this often (default 3 s; 0: none). */
  canaryEveryMs?: number;
  /** Items the chains walk through (default 200, the hostile site's catalogue). */
  items?: number;
  /** Crawlee's log level: 'OFF' by default (the demo prints its own story). */
  quiet?: boolean;
}

export interface DemoCrawler {
  adapter: TargetHealth;
  /** Pages handled per host (production pages whose handler ran). */
  handled(host: string): number;
  /** Resolves when the crawler has stopped (after stop()). */
  stop(): Promise<void>;
}

const isCanary = (ctx: CheerioCrawlingContext): boolean =>
  (ctx.request.userData as { targetHealthCanary?: unknown }).targetHealthCanary === true;

export function startDemoCrawler(options: DemoCrawlerOptions): DemoCrawler {
  const chains = options.chainsPerHost ?? 4;
  const canaryEveryMs = options.canaryEveryMs ?? 3_000;
  const items = options.items ?? 200;
  const storageDir = mkdtempSync(join(tmpdir(), 'th-demo-crawlee-'));
  // Crawlee's request queue lives in memory (and this folder only if it must): nothing is left behind.
  const config = new Configuration({
    persistStorage: false,
    storageClientOptions: { localDataDirectory: storageDir },
    purgeOnStart: true,
  });
  const adapter = targetHealth({ recorder: options.recorder, controls: options.controls });
  const handled = new Map<string, number>();
  let step = 0;
  let stopping = false;

  const next = (host: string) => ({
    url: options.urlOf(host, `/item/${(step++ % items) + 1}`),
    uniqueKey: `${host}#${randomUUID()}`,
    label: 'product',
  });
  const continueChain = async (ctx: CheerioCrawlingContext) => {
    if (stopping || isCanary(ctx)) return;
    await ctx.crawler.addRequests([next(new URL(ctx.request.url).hostname)]);
  };

  // Crawlee's own log (its periodic statistics included) goes to stdout: off unless asked for. Set before
  // the crawler exists, so the loggers it derives (statistics, session pool) start silent too.
  if (options.quiet !== false) log.setLevel(log.LEVELS.OFF);
  const crawler = new CheerioCrawler(
    adapter.crawlerOptions<CheerioCrawlerOptions>({
      proxyConfiguration: new ProxyConfiguration({ proxyUrls: [...options.proxyUrls] }),
      // A fixed pool: the adapter's per-site limits are what shape each site's rate, not autoscaling.
      minConcurrency: chains * options.hosts.length,
      maxConcurrency: chains * options.hosts.length,
      maxRequestRetries: 2,
      requestHandlerTimeoutSecs: 30,
      navigationTimeoutSecs: 15,
      useSessionPool: true,
      keepAlive: true,
      requestHandler: async (ctx: CheerioCrawlingContext) => {
        const host = new URL(ctx.request.url).hostname;
        const priced = ctx.$('.price[data-price]').length > 0;
        adapter.extraction(
          ctx,
          priced
            ? { result: 'ok', validRecords: 1 }
            : { result: 'missing_fields', missingFields: ['price'], validRecords: 0 },
        );
        if (!isCanary(ctx)) handled.set(host, (handled.get(host) ?? 0) + 1);
        await continueChain(ctx);
      },
      // A page given up after the retries still continues its chain: the crawl goes on, as a monitor's does.
      failedRequestHandler: async (ctx: CheerioCrawlingContext) => continueChain(ctx),
    }),
    config,
  );
  if (options.quiet !== false) crawler.log.setLevel(log.LEVELS.OFF);

  const seeds = options.hosts.flatMap((host) => Array.from({ length: chains }, () => next(host)));
  const canaries =
    canaryEveryMs > 0
      ? setInterval(() => {
          void crawler
            .addRequests(
              options.hosts.map((host) => ({
                url: options.urlOf(host, `/item/1?th-canary=1`),
                uniqueKey: `canary-${host}-${randomUUID()}`,
                label: 'product',
                userData: { targetHealthCanary: true },
              })),
            )
            .catch(() => undefined);
        }, canaryEveryMs)
      : undefined;
  // keepAlive: the crawler waits for new requests instead of finishing when the queue is momentarily empty.
  const running = crawler.run(seeds);

  return {
    adapter,
    handled: (host) => handled.get(host) ?? 0,
    stop: async () => {
      stopping = true;
      if (canaries) clearInterval(canaries);
      // Finishes the requests in flight (a paused site's wait ends within the adapter's pauseDelayMs), then run()
      // resolves.
      crawler.stop('stopped by Target Health demo');
      await running.catch(() => undefined);
      rmSync(storageDir, { recursive: true, force: true });
    },
  };
}
