/**
 * The loop closed with a real crawler (issue 15; the short form of `npm run demo`): a real Crawlee
 * CheerioCrawler with the Target Health adapter crawls the hostile site through three labelled proxies,
 * recording through the HTTP API and obeying the controls it streams, while the real loops (dev server,
 * PostgreSQL) judge each site against a history back-filled from the site's own normal answers.
 *
 * - shop turns to challenging 35 % of its requests → the loop throttles it → the crawler's rate to shop drops;
 * - news puts up a 403 wall → the loop pauses it → no production request reaches news (canaries do);
 *   the wall comes down and a person resumes → production traffic is back;
 * - travel stays fine, but the dc-us proxy dies → a route alert, travel is not throttled.
 *
 * Assertions are on the crawler's own counts and on the site's access log, not only on the loops' state.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { startHostileWorld, type HostileWorld } from '../../hostile-site';
import { backfillHistory, sampleNormalAnswers } from '../../demo/history';
import { startDemoCrawler, type DemoCrawler } from '../../demo/crawler';
import { DEMO_LOOP_SETTINGS } from '../../demo/settings';
import { routeFromUserName } from '../../crawlee';
import { createRecorder, apiSink, type Recorder } from '../../recorder';
import { createControlsClient, type ControlsClient } from '../../controls-client';
import type { SiteControls } from '../../controls-client/types';
import { resumeUpdate, type SiteHealthState } from '../../control/messages';
import type { SiteHealthInput } from '../../control/config';
import { createLoopWorker, registerSite, startLoop, waitForState } from '../helpers/control-loop';
import { startTestApi, type TestApi } from '../helpers/api';
import { eventually, openHarness, testLogger, type TestHarness } from '../helpers/services';

const NOMINAL = 4;
const ROUTES = [{ label: 'dc-de' }, { label: 'dc-us' }, { label: 'resi-fr' }];
/** The site answers every page after this long, as a real one does: the concurrency limit then sets the rate. */
const PAGE_MS = 250;

let h: TestHarness;
let api: TestApi;
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
});
afterAll(async () => {
  await api?.close();
  await h?.close();
});

function loopInputFor(site: string): SiteHealthInput {
  const s = structuredClone(DEMO_LOOP_SETTINGS);
  return { site, ...s, policy: { ...s.policy, concurrency: { nominal: NOMINAL } } };
}

test('a real Crawlee crawler slows down, stops and resumes as the loop decides; a dead proxy is a route alert', async () => {
  const id = randomUUID().slice(0, 6);
  const [shop, news, travel] = [`shop-${id}.hostile.test`, `news-${id}.hostile.test`, `travel-${id}.hostile.test`];
  const hosts = [shop, news, travel];
  const normal = { kind: 'normal', latencyMs: PAGE_MS } as const;
  const world: HostileWorld = await startHostileWorld({
    hosts: [
      { name: shop, theme: 'shop', protection: 'cloudflare', mode: normal },
      { name: news, theme: 'news', protection: 'datadome', mode: normal },
      { name: travel, theme: 'travel', protection: 'akamai', mode: normal },
    ],
    routes: ROUTES,
  });
  const { worker, connection } = await createLoopWorker(h, { uiUrl: 'http://ui.test', logger: testLogger });
  let crawler: DemoCrawler | undefined;
  let recorder: Recorder | undefined;
  let controls: ControlsClient | undefined;
  try {
    // The sites' normal: pages sampled from the live site, spread over 12 past days through the crawler's routes.
    const now = Date.now();
    const routes = world.proxies.map((p) => {
      const r = routeFromUserName(p.label);
      return { pool: r.pool ?? p.label, ...(r.country !== undefined ? { country: r.country } : {}) };
    });
    for (const host of hosts) {
      await registerSite(h.pool, host);
      const answers = await sampleNormalAnswers((path) => world.site.urlOf(host, path), world.proxies[0]!.url, ['/item/1', '/item/2', '/item/3', '/item/50', '/item/120', '/item/199']);
      await backfillHistory(h.pool, { site: host, routes, answers, days: 12, perDay: 300, now });
    }

    await worker.runUntil(async () => {
      const handles = new Map<string, WorkflowHandle>();
      for (const host of hosts) handles.set(host, await startLoop(h.client, h.taskQueue, loopInputFor(host)));
      const loop = (host: string) => handles.get(host)!;
      for (const host of hosts) await waitForState(loop(host), `${host}: first controls`, (s) => s.controls !== null && s.band !== 'learning', 60_000);

      // The crawler: events in through the API, controls out through its stream.
      const token = await api.token(['ingest', 'read']);
      recorder = createRecorder({ sink: apiSink({ apiUrl: api.url, token }), flushIntervalMs: 250, logger: testLogger });
      controls = createControlsClient({ apiUrl: api.url, token, sites: hosts, logger: testLogger });
      await controls.ready();
      const seen = new Map<string, SiteControls[]>();
      controls.onChange((c) => seen.set(c.site, [...(seen.get(c.site) ?? []), { ...c, updatedAt: new Date().toISOString() }]));
      crawler = await startDemoCrawler({ hosts, urlOf: (host, path) => world.site.urlOf(host, path), proxyUrls: world.proxies.map((p) => p.url), recorder, controls, chainsPerHost: NOMINAL, canaryEveryMs: 2_000 });
      await eventually(() => Promise.resolve(hosts.every((x) => crawler!.handled(x) >= 20) ? true : undefined), 'the crawl to reach every host', 60_000);

      // shop's rate before anything happens (the chains fill its concurrency).
      const before = await settledRate(world, shop, 15_000);

      // The site turns: shop challenges a third of its requests, news walls, the dc-us proxy dies.
      world.site.setMode(shop, { kind: 'challenging', share: 0.35, latencyMs: PAGE_MS });
      world.site.setMode(news, { kind: 'wall', latencyMs: PAGE_MS });
      world.proxy('dc-us').kill('refuse');

      // news: paused (waiting for a person), the crawler hears of it, and then only canaries reach news.
      const paused = await waitForState(loop(news), 'news paused', (s) => s.controls?.paused === true && s.awaitingHuman !== null, 240_000);
      expect(paused.band).toBe('resisting');
      const heard = await eventually(() => Promise.resolve(seen.get(news)?.find((c) => c.paused)), 'the crawler to hear of the pause', 30_000);
      // Requests the adapter admitted just before the pause reached it are on their way: give them one page time.
      const pausedFrom = Date.parse(heard.updatedAt) + PAGE_MS + 500;

      // shop: throttled to half its concurrency or less; its rate drops.
      const throttled = await waitForState(loop(shop), 'shop throttled', (s) => (s.controls?.concurrencyLimit ?? NOMINAL) <= NOMINAL / 2, 240_000);
      expect(throttled.controls?.paused).toBe(false);
      await eventually(() => Promise.resolve(controls!.controlsFor(shop)?.concurrencyLimit === throttled.controls!.concurrencyLimit ? true : undefined), 'the crawler to hear of the throttle', 30_000);
      const after = await settledRate(world, shop, 15_000);
      expect(after).toBeLessThan(before * 0.75);

      // travel: the dead proxy is a route alert; travel itself is not throttled.
      const alerted = await waitForState(loop(travel), 'travel route alert', (s) => s.alerts.route, 240_000);
      expect(alerted.routeDiagnosis?.verdict).toBe('route-specific');
      const travelControls = (await loop(travel).query<SiteHealthState>('state')).controls;
      expect(travelControls).toMatchObject({ concurrencyLimit: NOMINAL, paused: false });
      expect(seen.get(travel)?.some((c) => c.concurrencyLimit < NOMINAL || c.paused) ?? false).toBe(false);

      // While paused: production requests to news stopped, canaries went on.
      const whilePaused = world.site.log(news, { since: pausedFrom });
      expect(whilePaused.filter((e) => !e.canary)).toEqual([]);
      expect(whilePaused.filter((e) => e.canary).length).toBeGreaterThan(0);
      const stats = crawler.adapter.stats();
      expect(stats.deferredByPause).toBeGreaterThan(0);

      // The wall comes down; a person resumes; production traffic to news is back.
      world.site.setMode(news, normal);
      const resumedAt = Date.now();
      await loop(news).executeUpdate(resumeUpdate, { args: [{ who: 'e2e-test', why: 'the site lifted its wall' }] });
      await eventually(() => Promise.resolve(world.site.log(news, { since: resumedAt, canary: false }).length >= 10 ? true : undefined), 'production traffic to news after the resume', 60_000);
      expect(controls.controlsFor(news)?.paused).toBe(false);

      // Every event the crawler recorded was stored or is on its way; none was rejected or dropped.
      await recorder.close();
      const r = recorder.stats();
      expect(r.rejected).toBe(0);
      expect(r.dropped).toBe(0);
      expect(r.failed).toBe(0);
      recorder = undefined;
      for (const handle of handles.values()) await handle.terminate('test done');
    });
  } finally {
    await crawler?.stop();
    await recorder?.close();
    await controls?.close();
    await world.close();
    await connection.close();
  }
});

/** Requests per second the site received from production requests over the last `windowMs`, after waiting that long. */
async function settledRate(world: HostileWorld, host: string, windowMs: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  return world.site.rate(host, windowMs, { canary: false }).perSecond;
}
