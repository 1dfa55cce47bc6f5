/**
 * The console's Review page on the real API, PostgreSQL and the dev server, over the scripted incident of
 * review-cli.test.ts (a simulated challenge wave, `simulate` + `ingest`, its loop history written through the
 * loop's db functions, a person's resume after it): the page shows the window, the timeline and the lead time
 * `target-health review --json` prints for the same incident, finds that incident without a time, draws the
 * chart inline, and answers a bad parameter or an unknown site with a page naming the field. In Chromium
 * (playwright-core), screenshots of the page at 1280 and 375 px go to the test folder (TH_TEST_DIR).
 */
import { join } from 'node:path';
import { load } from 'cheerio';
import { type Browser, chromium } from 'playwright-core';
import { ensureChromium } from '../../stack/chromium';
import { when } from '../../client/review/words';
import { type Review, reviewSchema } from '../../client/review/schema';
import { recordReplayAsHistory } from '../kit/chart-history';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env, openHarness, type TestHarness } from '../kit/services';
import { simulateAndIngest } from '../kit/simulated-site';
import { startTestApi, type TestApi } from '../kit/api';

const M = 60_000;
const H = 60 * M;
let h: TestHarness;
let api: TestApi;
let site: string;
let incident: string;
let cookie: string;
let cli: Review;

beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
  let truth;
  ({ site, truth } = await simulateAndIngest('challenge-wave', 'console-review'));
  const onset = Date.parse(truth.onset!);
  await recordReplayAsHistory(h.pool, {
    site,
    from: new Date(onset - 2 * H),
    to: new Date(onset + 8 * H),
    tickMs: M,
    decisions: [
      {
        at: new Date(onset + 5 * H + 40 * M + 30_000).toISOString(),
        kind: 'resume',
        who: 'alice@example.com',
        why: 'the wave is over',
      },
    ],
  });
  incident = new Date(onset + H).toISOString();
  const printed = await run(
    CLI,
    ['review', site, '--incident', incident, '--json', '--no-chart', '--quiet-days', '0'],
    cleanEnv({ DATABASE_URL: env('DATABASE_URL') }),
  );
  expect(printed.stderr).toBe('');
  cli = reviewSchema.parse(JSON.parse(printed.stdout));
  const signedIn = await fetch(`${api.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: api.url },
    body: new URLSearchParams({ token: await api.token(['read'], 'carol@example.com') }).toString(),
  });
  expect(signedIn.status).toBe(303);
  cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
}, 300_000);
afterAll(async () => {
  await api?.close();
  await h?.close();
});

const get = (path: string, withCookie = true) =>
  fetch(`${api.url}${path}`, { redirect: 'manual', headers: withCookie ? { cookie } : {} });
const reviewPath = (query = '') => `/console/sites/${site}/review${query}`;

/** The timeline rows of a page: [time as datetime, the band column]. */
function timelineOf(html: string): string[][] {
  const $ = load(html);
  return $('#timeline')
    .parent()
    .find('table')
    .first()
    .find('tbody tr')
    .toArray()
    .map((tr) => [$(tr).find('time').attr('datetime')!, $(tr).find('td').eq(1).text()]);
}

test('the page of an incident shows the window, timeline and lead time `review --json` prints', async () => {
  const r = await get(reviewPath(`?incident=${encodeURIComponent(incident)}&tune=1`));
  expect(r.status).toBe(200);
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
  const html = await r.text();
  const $ = load(html);
  expect($('h2.title').text()).toBe(`Incident review: ${site}, ${when(cli.window.from)} → ${when(cli.window.to)}`);
  expect(cli.timeline.length).toBeGreaterThan(1);
  expect(timelineOf(html).map((row) => row[0])).toEqual(cli.timeline.map((b) => b.at));
  expect(timelineOf(html).map((row) => row[1]!.split(' → ')[0])).toEqual(cli.timeline.map((b) => b.from ?? '—'));
  // The lead time: the first warning and the peak, at the CLI's moments.
  expect(cli.lead).not.toBeNull();
  const summary = $('#summary').parent();
  expect(summary.find(`time[datetime="${cli.lead!.firstWarningAt}"]`).length).toBeGreaterThan(0);
  expect($('#lead').parent().find(`time[datetime="${cli.lead!.peakReachedAt}"]`).length).toBeGreaterThan(0);
  // The person's decision, and the tuning's headline, as the CLI has them.
  expect($('#decisions').parent().text()).toContain('alice@example.com');
  expect($('#tune').parent().text()).toContain(cli.tuning.headline.text);
  // The chart is inline SVG (no script, no external reference), its marks escaped by Vega.
  const svg = $('figure.chart svg');
  expect(svg).toHaveLength(1);
  expect(svg.find('path').length).toBeGreaterThan(0);
  expect(html).not.toMatch(/<script|<foreignObject|\son[a-z]+=/i);
  // No quiet day replayed unless asked, and the page says how to ask.
  expect($('#tune').parent().text()).toContain('this page replays none unless asked');
}, 120_000);

test('without a time: the latest incident, the same window; what to tune only when asked', async () => {
  const r = await get(reviewPath());
  expect(r.status).toBe(200);
  const html = await r.text();
  const $ = load(html);
  expect($('h2.title').text()).toBe(`Incident review: ${site}, ${when(cli.window.from)} → ${when(cli.window.to)}`);
  expect(html).toContain('The latest incident');
  expect(timelineOf(html).map((row) => row[0])).toEqual(cli.timeline.map((b) => b.at));
  expect($('#tune').parent().text()).toContain('Not replayed yet');
  expect($('figure.chart svg')).toHaveLength(1);
}, 120_000);

test.each([
  ['a time that is not one', '?incident=yesterday-ish', 400, /^incident: "yesterday-ish" is not a time; use /],
  ['a future time', `?incident=${encodeURIComponent('2999-01-01T00:00:00Z')}`, 400, /^incident: .* is in the future/],
  ['too many quiet days', '?quiet-days=30', 400, /^quiet-days: "30" is not a number of days from 0 to 7; /],
  ['an unknown parameter', '?when=now', 400, /^query: only incident .* are understood/],
  ['a time with no incident near it', `?incident=${encodeURIComponent('2001-01-01T00:00:00Z')}`, 404, /^incident: /],
])('%s: a page naming the field and the fix', async (_name, query, status, message) => {
  const r = await get(reviewPath(query));
  expect(r.status).toBe(status);
  const $ = load(await r.text());
  expect($('[role=alert]').text()).toMatch(message);
  expect($('nav.crumbs a').first().attr('href')).toBe('/console/fleet');
});

test('an unknown site is a 404 page, a bad site name a 400 page; no session is sent to sign in', async () => {
  const unknown = await get('/console/sites/never-seen.example.com/review');
  expect(unknown.status).toBe(404);
  expect(load(await unknown.text())('[role=alert]').text()).toMatch(/^site: never-seen\.example\.com is unknown here/);
  const bad = await get(`/console/sites/${encodeURIComponent('a b')}/review`);
  expect(bad.status).toBe(400);
  expect(load(await bad.text())('[role=alert]').text()).toMatch(/^site: /);
  const anonymous = await get(reviewPath(), false);
  expect(anonymous.status).toBe(303);
  expect(anonymous.headers.get('location')).toBe('/console/sign-in');
});

describe('in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    const found = ensureChromium();
    browser = await chromium.launch({ executablePath: found.executablePath, args: found.args, headless: true });
  }, 60_000);
  afterAll(async () => browser?.close());

  test.each([1280, 375])(
    'at %i px: the review page, screenshot kept',
    async (width) => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      try {
        await context.addCookies([
          { name: 'th_session', value: cookie.split('=')[1]!, url: api.url, httpOnly: true, sameSite: 'Strict' },
        ]);
        const page = await context.newPage();
        const violations: string[] = [];
        page.on('console', (m) => {
          if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text());
        });
        await page.goto(`${api.url}${reviewPath(`?incident=${encodeURIComponent(incident)}`)}`);
        await page.getByRole('heading', { name: 'What to tune' }).waitFor();
        // The chart fits the page's width, at a phone's too.
        const box = await page.locator('figure.chart svg').boundingBox();
        expect(box!.width).toBeLessThanOrEqual(width);
        expect(violations).toEqual([]);
        await page.screenshot({ path: join(env('TH_TEST_DIR'), `console-review-${width}.png`), fullPage: true });
      } finally {
        await context.close();
      }
    },
    120_000,
  );
});
