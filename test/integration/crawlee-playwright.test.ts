/**
 * The adapter with a real PlaywrightCrawler (Debian's Chromium, installed by stack/chromium.ts when
 * absent and running as root): the body comes from the page, the route from the proxy, a challenge
 * page is recorded with its body and its session retired.
 */
import { ensureChromium } from '../../stack/chromium';
import { crawl, stopCrawls } from './crawlee-crawl';
import { startTestProxy, startTestSite, type TestProxy, type TestSite } from './crawlee-site';

let site: TestSite;
let proxy: TestProxy;
let browser: { executablePath: string; args: string[] };
beforeAll(async () => {
  const found = ensureChromium();
  if (found.installMs > 0) process.stderr.write(`chromium installed in ${found.installMs} ms\n`);
  browser = { executablePath: found.executablePath, args: found.args };
  site = await startTestSite();
  proxy = await startTestProxy(site.port);
}, 600_000);
afterAll(async () => {
  await proxy.close();
  await site.close();
  stopCrawls();
});

test('PlaywrightCrawler: page body and title recorded, a challenge recorded and its session retired', async () => {
  const host = 'shop-browser.test';
  const {
    crawlerStats,
    events: all,
    stats,
  } = await crawl({
    crawler: 'playwright',
    browser,
    proxyUrl: proxy.url('residential-de'),
    requests: [{ url: `http://${host}/ok/1`, label: 'product' }, `http://${host}/challenge/1`],
    crawlerOptions: { maxRequestRetries: 0, maxConcurrency: 1 },
  }).done;
  expect(crawlerStats).toEqual({ requestsFinished: 1, requestsFailed: 1 });
  const events = all.filter((e) => e.site === host);
  expect(events).toHaveLength(2);
  expect(site.counts(host).hits).toBe(2);
  const ok = events.find((e) => e.status === 200);
  expect(ok).toMatchObject({
    pageType: 'product',
    title: 'Product /ok/1',
    route: { pool: 'residential', country: 'DE' },
    extraction: { result: 'ok', validRecords: 1 },
  });
  expect(ok?.bodySample).toContain('class="price"');
  expect(ok?.bytes as number).toBeGreaterThan(500);
  expect(ok?.latencyMs as number).toBeGreaterThan(0);
  const challenge = events.find((e) => e.status === 403);
  expect(challenge?.bodySample).toContain('challenge-running');
  expect(challenge?.headers).toMatchObject({ 'cf-mitigated': 'challenge' });
  expect(stats.sessionsRetired).toBe(1);
});
