/**
 * The console in a real browser: Debian's Chromium (headless, driven by playwright-core, found as the other
 * e2e tests find it: stack/chromium.ts) signs in with a read token through the form, with the keyboard,
 * sees the Fleet page with a really registered site, filters it, and signs out. Screenshots of both pages at
 * 1280 and 375 px wide are kept in the test folder (TH_TEST_DIR) beside the other e2e tests' artifacts.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { ensureChromium } from '../../stack/chromium';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { env, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
let browser: Browser;
const site = `console-e2e-${randomUUID().slice(0, 8)}.example.com`;

beforeAll(async () => {
  const found = ensureChromium();
  h = await openHarness();
  api = await startTestApi(h);
  const started = await fetch(
    `${api.url}/v1/sites/${site}/loop`,
    authed(await api.token(['admin']), { method: 'POST' }),
  );
  expect(started.status).toBe(201);
  browser = await chromium.launch({ executablePath: found.executablePath, args: found.args, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await h?.close();
});

test.each([1280, 375])('at %i px: sign in with the keyboard, see the fleet, filter it, sign out', async (width) => {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  try {
    const page = await context.newPage();
    const shot = (name: string): Promise<Buffer> =>
      page.screenshot({ path: join(env('TH_TEST_DIR'), `console-${name}-${width}.png`), fullPage: true });
    await page.goto(`${api.url}/console`);
    // No session: sent to sign in.
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await shot('sign-in');
    const token = await api.token(['read']);
    await page.getByLabel('API token').fill(token);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/fleet$/);
    // The token never reaches a URL; the cookie is not readable by a script.
    expect(page.url()).not.toContain(token);
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['th_session', true, 'Strict']]);
    expect(cookies[0]!.value).not.toContain(token);
    await page.getByRole('row', { name: new RegExp(site.replace(/\./g, '\\.')) }).waitFor({ timeout: 30_000 });
    await shot('fleet');
    // The name filter, by label; Enter submits the GET form.
    await page.getByLabel('Name contains or matches').fill(site);
    await page.keyboard.press('Enter');
    await page.waitForURL(/site=/);
    expect(await page.getByRole('status').textContent()).toMatch(/^1 site: /);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/sign-in$/);
    await page.goto(`${api.url}/console/fleet`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  } finally {
    await context.close();
  }
});
