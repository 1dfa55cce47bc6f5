/**
 * The console's Site page on the real API, PostgreSQL and the dev server: a site whose real loop paused on a wall
 * of Cloudflare challenges (events carrying `cf-mitigated: challenge` and the "Just a moment..." title, classified
 * at ingest by the built-in markers) shows what it served — the vendor and marker, its share, every route, recent
 * examples with their titles —, the reasons and what put it in its band, the signals against their normal, the
 * chart as inline SVG and the recent ticks; a hostile title is escaped; a bad site name is a 400 page naming the
 * field, an unknown site a 404 page with the way back; no session is sent to sign in. In Chromium (playwright-core,
 * as test/integration/console-e2e.test.ts): from the Fleet page to the Site page with the keyboard at 1280 and
 * 375 px, no Content-Security-Policy violation, screenshots `console-site-<width>.png` in TH_TEST_DIR.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { workflowIdForSite } from '../../core/common/names';
import { refusalRuleIn } from '../../core/control/band-wording';
import { CONTENT_SECURITY_POLICY } from '../../client/console/layout';
import { ingestEvents } from '../../server/db/signal-store';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { createTestWorker, env, openHarness, type TestHarness } from '../kit/services';
import { ensureChromium } from '../../stack/chromium';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let api: TestApi;
let site: string;
let cookie: string;
let browser: Browser | undefined;
const HOSTILE = '<script>alert(1)</script> Just a moment...';
const ROUTES = [
  { country: 'de', pool: 'dc-1' },
  { country: 'us', pool: 'dc-2' },
];

/** Cloudflare's challenge as a crawler reports it: status 403, its header, its interstitial title. */
function challenge(i: number, ts: number, title = 'Just a moment...'): Record<string, unknown> {
  return {
    eventId: randomUUID(),
    ts,
    site,
    latencyMs: 150,
    status: 403,
    bytes: 7_000,
    headers: { 'cf-mitigated': 'challenge' },
    title,
    route: ROUTES[i % ROUTES.length],
  };
}

async function signIn(): Promise<string> {
  const r = await fetch(`${api.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: api.url },
    body: new URLSearchParams({ token: await api.token(['read']) }).toString(),
  });
  expect(r.status).toBe(303);
  return /^(th_session=[^;]+);/.exec(r.headers.get('set-cookie') ?? '')![1]!;
}

const get = (path: string): Promise<Response> =>
  fetch(`${api.url}${path}`, { redirect: 'manual', headers: { cookie } });
/** The page's text, tags removed and entities of the five escaped characters decoded, white space collapsed. */
const text = (html: string): string =>
  html
    .replace(/<(svg|style)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  api = await startTestApi(h);
  site = await prepareSite(h.pool, `console-site-${randomUUID().slice(0, 6)}`, ROUTES, 300);
  await ingestNow(h.pool, site, { ok: 50, route: ROUTES[0] });
  await ingestNow(h.pool, site, { ok: 50, route: ROUTES[1] });
  const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
  // The wall: 300 challenges over both routes in the latest whole minute, one with a hostile title.
  const t = Math.floor(Date.now() / 60_000) * 60_000 - 1;
  const events = Array.from({ length: 300 }, (_, i) => challenge(i, t - (i % 1000), i === 0 ? HOSTILE : undefined));
  const stored = await ingestEvents(h.pool, events);
  expect(stored.rejected).toEqual([]);
  await waitForState(handle, 'paused on the wall', (s) => s.band === 'resisting' && s.awaitingHuman !== null);
  cookie = await signIn();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await h.client.workflow
    .getHandle(workflowIdForSite(site))
    .terminate('test over')
    .catch(() => undefined);
  await api?.close();
  worker?.shutdown();
  await running;
  await connection?.close();
  await h?.close();
});

test('the wall is classified at ingest as Cloudflare (marker and title stored)', async () => {
  const { rows } = await h.pool.query<{ outcome: string; marker_id: string; n: string; titled: string }>(
    `SELECT outcome, marker_id, count(*) AS n, count(title) AS titled FROM request_events
      WHERE site = $1 AND status = 403 GROUP BY 1, 2`,
    [site],
  );
  expect(rows).toEqual([{ outcome: 'challenge', marker_id: 'cloudflare-mitigated-header', n: '300', titled: '300' }]);
  // Ordinary pages keep no title.
  const ok = await h.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM request_events WHERE site = $1 AND outcome = 'ok' AND title IS NOT NULL`,
    [site],
  );
  expect(ok.rows[0]!.n).toBe('0');
});

test('the Site page: what it served by vendor and marker, examples, reasons, the band and its cause', async () => {
  const r = await get(`/console/sites/${site}`);
  expect(r.status).toBe(200);
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(r.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  // The chart is inline SVG: the page needs nothing beyond the console's one policy (its only script is the
  // Fleet page's own static file, 'self'; nothing inline, nothing unsafe).
  expect(r.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  expect(r.headers.get('content-security-policy')).not.toMatch(/unsafe/);
  const html = await r.text();
  const page = text(html);
  // What it served: 300 challenges of 400 requests in the current minute, i.e. 75% since the wall began.
  expect(page).toMatch(/400 requests in the last 6 h, 300 refused \(75%\)/);
  expect(page).toMatch(
    new RegExp(
      // The share counts the requests since the wall's onset: 100 % when the ok traffic fell in an earlier minute.
      String.raw`(75|100)% Cloudflare challenge \(marker cloudflare-mitigated-header \) on every route ` +
        String.raw`since \d{4}-\d\d-\d\d \d\d:\d\d UTC, \d+(s|m) ago — 300 requests`,
    ),
  );
  // The latest examples: time, route, status, title.
  expect(html).toMatch(/<code>(DE\|dc-1\||US\|dc-2\|)<\/code><\/td><td class="num" data-label="Status">403<\/td>/);
  expect(page).toContain('Just a moment...');
  // The hostile title is text, never markup.
  expect(html).not.toContain('<script>');
  expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Just a moment...');
  // The band, what put it there (the pausing tick's rule, or the score), the reasons and the signals.
  const state = await h.client.workflow.getHandle(workflowIdForSite(site)).query('state');
  const s = state as { band: string; reasons: string[]; awaitingHuman: { assessmentKey: string | null } };
  const paused = await h.pool.query<{ reasons: string[] }>(
    `SELECT result->'assessment'->'reasons' AS reasons FROM assessments WHERE assessment_key = $1`,
    [s.awaitingHuman.assessmentKey],
  );
  const rule = refusalRuleIn(paused.rows[0]!.reasons);
  const ruleName = rule?.replace('_', '-');
  expect(page).toContain(
    rule === null
      ? 'Band resisting Put there by the smoothed score, through the band thresholds'
      : `Band resisting (paused by the ${ruleName} rule) Put there by paused by the ${ruleName} rule`,
  );
  expect(page).toContain(`Reasons ${s.reasons.join(', ') || '—'}`);
  expect(page).toMatch(/challenge \d+(\.\d+)?% \(\d+(\.\d+)?%–\d+(\.\d+)?%\) \d+\/\d+/);
  expect(page).toMatch(/Waiting for a person yes , since/);
  expect(page).toMatch(/waits for a person/);
  // Decide and review links, the chart inline, recent ticks.
  expect(html).toContain(`href="/console/sites/${site}/decide"`);
  expect(html).toContain(`href="/console/sites/${site}/review"`);
  expect(html).toMatch(/<figure class="chart" role="img"[^>]*><svg /);
  expect(html).toContain(`href="/console/sites/${site}?range=14d#chart"`);
  expect(page).toMatch(/Recent ticks The latest \d+, newest first/);
});

test('the two-week chart, and the Fleet page links the site', async () => {
  const r = await get(`/console/sites/${site}?range=14d`);
  expect(r.status).toBe(200);
  const html = await r.text();
  expect(html).toMatch(/<strong aria-current="true">last two weeks<\/strong>/);
  expect(html).toMatch(/<svg /);
  const fleet = await (await get(`/console/fleet?site=${site}`)).text();
  expect(fleet).toContain(`<a href="/console/sites/${site}">${site}</a>`);
});

test('bad input: a bad site name or range is a 400 page naming the field; an unknown site a 404 page', async () => {
  const bad = await get('/console/sites/not%20a%20host');
  expect(bad.status).toBe(400);
  expect(text(await bad.text())).toMatch(/site: must be a host name like shop\.example\.com \(got "not a host"\)/);
  const range = await get(`/console/sites/${site}?range=3y`);
  expect(range.status).toBe(400);
  expect(text(await range.text())).toMatch(/range: expected 1d .* or 14d/);
  const unknown = await get(`/console/sites/nobody-${randomUUID().slice(0, 6)}.example.com`);
  expect(unknown.status).toBe(404);
  const body = await unknown.text();
  expect(text(body)).toMatch(/site: no health loop runs for nobody-/);
  expect(body).toContain('href="/console/fleet"');
  expect(body).not.toMatch(/at .*\.js:\d+/);
});

test('without a session: to sign in, nothing shown', async () => {
  const r = await fetch(`${api.url}/console/sites/${site}`, { redirect: 'manual' });
  expect(r.status).toBe(303);
  expect(r.headers.get('location')).toBe('/console/sign-in');
  // A bearer token is not a session.
  const bearer = await fetch(
    `${api.url}/console/sites/${site}`,
    authed(await api.token(['read']), { redirect: 'manual' }),
  );
  expect(bearer.status).toBe(303);
});

test.each([1280, 375])('in Chromium at %i px: from the fleet to the Site page with the keyboard', async (width) => {
  if (browser === undefined) {
    const found = ensureChromium();
    browser = await chromium.launch({ executablePath: found.executablePath, args: found.args, headless: true });
  }
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  try {
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${api.url}/console/sign-in`);
    await page.getByLabel('API token').fill(await api.token(['read']));
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/fleet$/);
    const link = page.getByRole('link', { name: site });
    await link.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/console/sites/${site.replace(/\./g, '\\.')}$`));
    await page.getByRole('heading', { name: 'What the site actually served' }).waitFor();
    expect(
      await page
        .getByText(/Cloudflare challenge/)
        .first()
        .isVisible(),
    ).toBe(true);
    // The chart is drawn inline and fits the screen's width.
    const svg = page.locator('figure.chart svg');
    expect(await svg.count()).toBe(1);
    expect((await svg.boundingBox())!.width).toBeLessThanOrEqual(width);
    await page.screenshot({ path: join(env('TH_TEST_DIR'), `console-site-${width}.png`), fullPage: true });
    // The two-week chart, by its link.
    await page.getByRole('link', { name: 'last two weeks' }).click();
    await page.waitForURL(/range=14d/);
    expect(await page.locator('figure.chart svg').count()).toBe(1);
    expect(violations).toEqual([]);
  } finally {
    await context.close();
  }
});
