/**
 * The loop closed with a real Scrapy crawl (the Scrapy twin of crawl-e2e.test.ts): Scrapy 2.19
 * with the Target Health extension (packages/python, `target_health.scrapy`) crawls the hostile site through three
 * labelled proxies, recording through the HTTP API and obeying the controls it streams, while the real loops
 * (dev server, PostgreSQL) judge each site against a history back-filled from the site's own normal
 * answers. The spider (packages/python/tests/scrapy/crawl/monitor_spider.py) is a price monitor: each host
 * is crawled by a fixed number of chains (a page's callback or errback schedules the next page), plus a
 * canary per host every 2 s.
 *
 * - shop turns to challenging 35 % of its requests (and slower answers) → the loop throttles it
 *   (degrading, not paused) → Scrapy's rate to shop drops, at the site and in Scrapy's own counts;
 * - news puts up a 403 wall → the loop pauses it → no production request reaches news (the spider's
 *   canaries do), Scrapy's requests for news are held in the extension, not dropped; the wall comes
 *   down and a person resumes → the held requests go out and production traffic is back;
 * - travel stays fine: crawled throughout, its controls never change;
 * - at the end every event Scrapy posted is stored once, none rejected or dropped, and every request the
 *   site served has its stored event.
 */
import { resumeUpdate, stateQuery } from '../../loop/messages';
import type { PythonVenv } from '../../stack/python-venv';
import { createLoopWorker } from '../kit/control-loop';
import { CRAWL_ROUTES as ROUTES, startCrawlLoops, startCrawlWorld } from '../kit/crawl-world';
import { startTestApi, type TestApi } from '../kit/api';
import { waitForLoop } from '../kit/fault-checks';
import { installPythonPackage, MonitorCrawl, scrapyVenv, type InstalledPythonPackage } from '../kit/scrapy';
import { eventually, openHarness, testLogger, type TestHarness } from '../kit/services';

const NOMINAL = 4;
/**
 * Every page takes 1 s (1.5 s once hostile): the concurrency the extension admits, not Scrapy's CPU (two shared cores),
 * sets the rate.
 */
const PAGE_MS = 1_000;
const HOSTILE_PAGE_MS = 1_500;
/** Rates are compared over windows this long: before the turn, and once throttled. */
const BEFORE_MS = 15_000;
const WINDOW_MS = 20_000;

let h: TestHarness;
let api: TestApi;
let venv: PythonVenv;
let installed: InstalledPythonPackage;
beforeAll(async () => {
  venv = await scrapyVenv();
  // The crawl runs the package as a user installs it: the built wheel, not the source tree.
  installed = await installPythonPackage(venv);
  h = await openHarness();
  api = await startTestApi(h);
}, 600_000);
afterAll(async () => {
  await api?.close();
  await h?.close();
  installed?.remove();
});

test(
  'a real Scrapy crawl slows down, stops and resumes as the loop decides; a healthy site is left alone; every ' +
    'event is stored once',
  async () => {
    const { world, shop, news, travel, hosts } = await startCrawlWorld(h, PAGE_MS);
    const normal = { kind: 'normal', latencyMs: PAGE_MS } as const;
    const { worker, connection } = await createLoopWorker(h, { uiUrl: 'http://ui.test', logger: testLogger });
    let crawl: MonitorCrawl | undefined;
    try {
      await worker.runUntil(async () => {
        const { loop, handles } = await startCrawlLoops(h, hosts, NOMINAL);

        // Scrapy, a process of its own: events in through the API, controls out through its stream.
        const token = await api.token(['ingest', 'read']);
        const crawlFrom = Date.now();
        crawl = new MonitorCrawl(
          venv,
          installed.site,
          { hosts, proxyUrls: world.proxies.map((p) => p.url), chainsPerHost: NOMINAL, canaryEveryS: 2 },
          { url: api.url, token },
        );
        const c = crawl;
        await eventually(
          () => Promise.resolve(hosts.every((x) => (c.last?.handled[x] ?? 0) >= 20) ? true : undefined),
          'the crawl to reach every host',
          90_000,
        );
        // A whole window of crawling at nominal concurrency before the site turns: the rate to compare the throttled
        // one with.
        const beforeFrom = Date.now();
        await eventually(
          () => Promise.resolve((c.last?.at ?? 0) >= beforeFrom + BEFORE_MS ? true : undefined),
          'a window of crawling before the turn',
          BEFORE_MS + 30_000,
        );
        // The extension read the route from each proxy's user name: the hostile site saw all three routes, the store
        // holds them as the history does.
        expect(new Set(world.site.log(travel, { since: crawlFrom }).map((e) => e.route))).toEqual(
          new Set(ROUTES.map((r) => r.label)),
        );

        // The site turns: shop challenges a third of its requests and answers more slowly; news walls.
        world.site.setMode(shop, { kind: 'challenging', share: 0.35, latencyMs: HOSTILE_PAGE_MS });
        world.site.setMode(news, { kind: 'wall', latencyMs: PAGE_MS });
        const turnedAt = Date.now();

        // news: paused (waiting for a person); the extension applies it; from then on only canaries reach news.
        const paused = await waitForLoop(
          loop(news),
          'news paused',
          (s) => s.controls?.paused === true && s.awaitingHuman !== null,
          240_000,
        );
        expect(paused.band).toBe('resisting');
        expect(paused.controls?.canaryOnly).toBe(true);
        const heardPause = await eventually(
          () => Promise.resolve(c.heard.find((x) => x.site === news && x.paused)),
          'Scrapy to apply the pause',
          30_000,
        );
        // Requests the extension admitted just before it applied the pause are on their way: give them one page time.
        const pausedFrom = heardPause.at + PAGE_MS + 500;

        // shop: throttled (its concurrency lowered, not paused); Scrapy applies it.
        const throttled = await waitForLoop(
          loop(shop),
          'shop throttled',
          (s) => (s.controls?.concurrencyLimit ?? NOMINAL) < NOMINAL,
          240_000,
        );
        expect(throttled.band).toBe('degrading');
        expect(throttled.controls?.paused).toBe(false);
        const limit = throttled.controls!.concurrencyLimit;
        const heardThrottle = await eventually(
          () => Promise.resolve(c.heard.find((x) => x.site === shop && x.concurrencyLimit < NOMINAL)),
          'Scrapy to apply the throttle',
          30_000,
        );
        expect(heardThrottle.concurrencyLimit).toBeGreaterThanOrEqual(limit);
        expect(heardThrottle.paused).toBe(false);

        // shop's requests in flight at nominal concurrency (before the turn) against once throttled. Every
        // answer takes the page time (PAGE_MS before, HOSTILE_PAGE_MS after), so by Little's law rate × page
        // time is the concurrency Scrapy keeps — once throttled at most the heard limit over NOMINAL of before
        // (a 10-point margin). The window before ends at the turn, not at the throttle: how soon the loop
        // throttles (a tick or two, depending on where in its minute the turn falls) does not shorten it.
        const beforeTo = turnedAt;
        const afterFrom = heardThrottle.at + HOSTILE_PAGE_MS + 500;
        const afterTo = afterFrom + WINDOW_MS;
        await eventually(
          () => Promise.resolve((c.last?.at ?? 0) >= afterTo ? true : undefined),
          'a whole window of throttled crawling',
          2 * WINDOW_MS + 30_000,
        );
        const siteRate = (from: number, to: number) =>
          (world.site.log(shop, { since: from, canary: false }).filter((e) => e.ts < to).length * 1000) / (to - from);
        const ratio = heardThrottle.concurrencyLimit / NOMINAL + 0.1;
        const inFlight = (rate: number, pageMs: number) => (rate * pageMs) / 1000;
        const [siteBefore, siteAfter] = [
          inFlight(siteRate(beforeFrom, beforeTo), PAGE_MS),
          inFlight(siteRate(afterFrom, afterTo), HOSTILE_PAGE_MS),
        ];
        const [scrapyBefore, scrapyAfter] = [
          inFlight(c.rate(shop, beforeFrom, beforeTo), PAGE_MS),
          inFlight(c.rate(shop, afterFrom, afterTo), HOSTILE_PAGE_MS),
        ];
        process.stderr.write(
          `[scrapy-e2e] shop limit ${NOMINAL} → ${heardThrottle.concurrencyLimit}: in flight at the site ` +
            `${siteBefore.toFixed(2)} → ${siteAfter.toFixed(2)}, Scrapy ${scrapyBefore.toFixed(2)} → ` +
            `${scrapyAfter.toFixed(2)}\n`,
        );
        expect(siteBefore).toBeGreaterThan(1);
        expect(siteAfter).toBeLessThan(siteBefore * ratio);
        expect(scrapyBefore).toBeGreaterThan(1);
        expect(scrapyAfter).toBeLessThan(scrapyBefore * ratio);
        // What Scrapy's own stats say of it: its slot for shop was set to the limit it applied.
        expect(c.last?.stats[`slot_concurrency/${shop}`]).toBeLessThanOrEqual(heardThrottle.concurrencyLimit);

        // While paused: no production request reached news, the canaries did, and news's chains are held
        // in the extension (all NOMINAL of them), not dropped.
        const whilePaused = await eventually(
          () => Promise.resolve((c.last?.stats.requests_held_now ?? 0) >= NOMINAL ? c.last : undefined),
          "news's chains to be held",
          30_000,
        );
        expect(whilePaused.stats.requests_dropped_stopped ?? 0).toBe(0);
        const resumedAt = Date.now();
        const newsWhilePaused = world.site.log(news, { since: pausedFrom }).filter((e) => e.ts < resumedAt);
        expect(newsWhilePaused.filter((e) => !e.canary)).toEqual([]);
        expect(newsWhilePaused.filter((e) => e.canary).length).toBeGreaterThan(0);

        // travel, fine all along, was left alone: Scrapy heard its controls (the stream's snapshot) and only
        // ever at nominal; it was crawled throughout.
        const travelHeard = c.heard.filter((x) => x.site === travel);
        expect(travelHeard.length).toBeGreaterThan(0);
        expect(travelHeard.filter((x) => x.concurrencyLimit < NOMINAL || x.paused || x.band !== 'healthy')).toEqual([]);
        expect((await loop(travel).query(stateQuery)).controls).toMatchObject({
          concurrencyLimit: NOMINAL,
          paused: false,
        });
        expect(world.site.log(travel, { since: pausedFrom, canary: false }).length).toBeGreaterThan(20);

        // The wall comes down; a person resumes; the held requests go out and production traffic to news is back.
        world.site.setMode(news, normal);
        await loop(news).executeUpdate(resumeUpdate, { args: [{ who: 'e2e-test', why: 'the site lifted its wall' }] });
        await eventually(
          () =>
            Promise.resolve(world.site.log(news, { since: resumedAt, canary: false }).length >= 10 ? true : undefined),
          'production traffic to news after the resume',
          60_000,
        );
        expect(c.heard.filter((x) => x.site === news).at(-1)?.paused).toBe(false);
        const released = await eventually(
          () => Promise.resolve((c.last?.stats.requests_released ?? 0) >= NOMINAL ? c.last : undefined),
          'the held requests to be released',
          30_000,
        );
        expect(released.finished[news]).toBeGreaterThan(whilePaused.finished[news] ?? 0);

        // Scrapy stops (graceful shutdown): the extension sends what it holds; nothing was rejected or dropped.
        const final = await c.stop();
        crawl = undefined;
        const s = final.stats;
        expect(s).toMatchObject({ events_rejected: 0, events_dropped: 0, requests_held_now: 0 });
        expect(s.events_sent).toBe(s.events_recorded);
        expect(s.requests_released).toBe(s.requests_held);
        expect(s.requests_dropped_stopped ?? 0).toBe(0);
        expect(s.requests_given_back_at_close ?? 0).toBe(0);
        expect(s.events_recorded).toBeGreaterThan(300);

        // The store: each event Scrapy posted, once; and every request the site served has its event
        // (those with a status: a download error that never reached the site has no access-log line).
        const { rows } = await h.pool.query<{ site: string; n: string; ids: string; with_status: string }>(
          `SELECT site, count(*) AS n, count(DISTINCT event_id) AS ids, count(status) AS with_status FROM request_events
          WHERE site = ANY($1) AND event_id LIKE 'scrapy-%' GROUP BY site`,
          [hosts],
        );
        expect(rows.reduce((sum, r) => sum + Number(r.n), 0)).toBe(s.events_sent);
        for (const r of rows) expect(r.ids).toBe(r.n);
        for (const host of hosts) {
          const served = world.site.log(host, { since: crawlFrom }).length;
          expect({ host, stored: Number(rows.find((r) => r.site === host)?.with_status ?? 0) }).toEqual({
            host,
            stored: served,
          });
        }
        for (const handle of handles.values()) await handle.terminate('test done');
      });
    } catch (err) {
      // What Scrapy saw, beside what the loop thought: which of the two went wrong.
      if (err instanceof Error) {
        const last = crawl?.last;
        if (last)
          err.message +=
            `\nScrapy's last report: ` +
            `${JSON.stringify({ handled: last.handled, finished: last.finished, stats: last.stats })}\nheard: ` +
            `${JSON.stringify(crawl?.heard)}`;
        if (crawl) err.message += `\nScrapy's log:\n${crawl.log(4_000)}`;
        for (const host of hosts) err.message += `\n${host} served: ${JSON.stringify(world.site.summary(host))}`;
        const { rows } = await h.pool.query<{
          site: string;
          minute: string;
          status: number | null;
          outcome: string;
          n: string;
        }>(
          `SELECT site, to_char(date_trunc('minute', ts), 'HH24:MI') AS minute, status, outcome, count(*) AS n
          FROM request_events
          WHERE site = ANY($1) AND ts > now() - interval '15 minutes' GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
          [hosts],
        );
        err.message +=
          `\nstored: ` +
          `${rows.map((r) => `${r.site.split('-')[0]} ${r.minute} ${r.status ?? '-'} ${r.outcome} ${r.n}`).join('; ')}`;
      }
      throw err;
    } finally {
      crawl?.kill();
      await world.close();
      await connection.close();
    }
  },
  12 * 60_000,
);
