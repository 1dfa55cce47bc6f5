/**
 * The world both end-to-end crawl tests run in (crawl-e2e with Crawlee, scrapy-e2e with Scrapy): three
 * hosts of the hostile site (shop, news, travel) behind three labelled proxies, each host registered with
 * a history back-filled from its own normal pages (12 days through the crawl's routes), and a loop per
 * host at the demo's settings once asked for.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { startHostileWorld, type HostileWorld } from '../../dev/hostile-site';
import { backfillHistory, sampleNormalAnswers } from '../../dev/demo/history';
import { demoLoopInput } from '../../dev/demo/settings';
import { routeFromUserName } from '@target-health/crawler/crawlee';
import { registerSite, startLoop } from './control-loop';
import { waitForLoop } from './fault-checks';
import type { TestHarness } from './services';

export const CRAWL_ROUTES = [{ label: 'dc-de' }, { label: 'dc-us' }, { label: 'resi-fr' }];

export interface CrawlWorld {
  world: HostileWorld;
  shop: string;
  news: string;
  travel: string;
  hosts: string[];
}

/** The hosts (answering every page after `pageMs`), their proxies, and each host's back-filled normal. */
export async function startCrawlWorld(h: TestHarness, pageMs: number): Promise<CrawlWorld> {
  const id = randomUUID().slice(0, 6);
  const [shop, news, travel] = [`shop-${id}.hostile.test`, `news-${id}.hostile.test`, `travel-${id}.hostile.test`];
  const normal = { kind: 'normal', latencyMs: pageMs } as const;
  const world = await startHostileWorld({
    hosts: [
      { name: shop, theme: 'shop', protection: 'cloudflare', mode: normal },
      { name: news, theme: 'news', protection: 'datadome', mode: normal },
      { name: travel, theme: 'travel', protection: 'akamai', mode: normal },
    ],
    routes: CRAWL_ROUTES,
  });
  const hosts = [shop, news, travel];
  try {
    // The sites' normal: pages sampled from the live site, spread over 12 past days through the crawl's routes.
    const now = Date.now();
    const routes = world.proxies.map((p) => {
      const r = routeFromUserName(p.label);
      return { pool: r.pool ?? p.label, ...(r.country !== undefined ? { country: r.country } : {}) };
    });
    for (const host of hosts) {
      await registerSite(h.pool, host);
      const answers = await sampleNormalAnswers((path) => world.site.urlOf(host, path), world.proxies[0]!.url, [
        '/item/1',
        '/item/2',
        '/item/3',
        '/item/50',
        '/item/120',
        '/item/199',
      ]);
      await backfillHistory(h.pool, { site: host, routes, answers, days: 12, perDay: 300, now });
    }
  } catch (err) {
    await world.close();
    throw err;
  }
  return { world, shop, news, travel, hosts };
}

/** A loop per host at the demo's settings, each past its first controls; call inside the worker's runUntil. */
export async function startCrawlLoops(
  h: TestHarness,
  hosts: readonly string[],
  nominalConcurrency: number,
): Promise<{ loop: (host: string) => WorkflowHandle; handles: ReadonlyMap<string, WorkflowHandle> }> {
  const handles = new Map<string, WorkflowHandle>();
  for (const host of hosts)
    handles.set(host, await startLoop(h.client, h.taskQueue, demoLoopInput(host, { nominalConcurrency })));
  const loop = (host: string): WorkflowHandle => handles.get(host)!;
  for (const host of hosts)
    await waitForLoop(
      loop(host),
      `${host}: first controls`,
      (s) => s.controls !== null && s.band !== 'learning',
      60_000,
    );
  return { loop, handles };
}
