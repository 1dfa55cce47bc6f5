/**
 * A real decision in a real browser: a site's loop on the dev server is paused by its own assessment of real
 * traffic — a wall of 403s sent through the product's ingest path (`POST /v1/events`) — then a person signs in
 * with a `decide` token using the keyboard (Debian's Chromium, headless, via playwright-core), opens the
 * site's Decide page, resumes it (cautious) with a why, checks the preview and confirms. The workflow's state,
 * the controls the crawler follows (`GET /v1/sites/:site/controls`) and the audit trail all show it, under
 * the token's name. Screenshots of the Decide page, the preview and the result at 1280 and 375 px are kept
 * in the test folder (TH_TEST_DIR). The Fleet page, left open, follows another real loop into its pause
 * through its live stream, without a reload and without losing the keyboard's focus.
 */
import { join } from 'node:path';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { type Browser, chromium } from 'playwright-core';
import { ensureChromium } from '../../stack/chromium';
import { stateQuery } from '../../loop/messages';
import { controlAudit } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { loopInput, prepareSite, startHealthySite, waitForState, type Mix } from '../kit/control-loop';
import { createTestWorker, env, openHarness, type TestHarness } from '../kit/services';
import { eventsOf } from '../kit/sites-traffic';
import type { WorkflowHandle } from '@temporalio/client';

let h: TestHarness;
let api: TestApi;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let browser: Browser;
let ingestToken: string;
const DECIDER = 'oncall-erin@example.com';
/** One paused site per width: a site is resumed once. */
const paused = new Map<number, { site: string; handle: WorkflowHandle }>();

/** Traffic as the crawler sends it: through `POST /v1/events`, stamped in the latest whole minute (judged at once). */
async function send(site: string, mix: Mix): Promise<void> {
  const t = Math.floor(Date.now() / 60_000) * 60_000 - 1;
  const r = await fetch(
    `${api.url}/v1/events`,
    authed(ingestToken, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(eventsOf(site, mix, (i) => t - (i % 1000))),
    }),
  );
  expect(r.status).toBe(200);
}

/** A healthy loop, then a wall of 403s: its own assessment pauses it (resisting, waiting for a person). */
async function pausedByWall(): Promise<{ site: string; handle: WorkflowHandle }> {
  const site = await prepareSite(h.pool, 'console-decide-e2e');
  await send(site, { ok: 100 });
  const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
  await send(site, { hard: 400 });
  await waitForState(handle, `${site} paused by the wall`, (s) => s.awaitingHuman !== null && s.band === 'resisting');
  return { site, handle };
}

beforeAll(async () => {
  const found = ensureChromium();
  h = await openHarness();
  api = await startTestApi(h);
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  ingestToken = await api.token(['ingest']);
  const [a, b] = await Promise.all([pausedByWall(), pausedByWall()]);
  paused.set(1280, a);
  paused.set(375, b);
  browser = await chromium.launch({ executablePath: found.executablePath, args: found.args, headless: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const { handle } of paused.values()) await handle.terminate('test done').catch(() => undefined);
  worker?.shutdown();
  await running;
  await connection?.close();
  await api?.close();
  await h?.close();
});

test.each([1280, 375])(
  'at %i px: a paused site resumed with the keyboard, seen in the loop, controls, audit',
  async (width) => {
    const { site, handle } = paused.get(width)!;
    const why = `checked ${site} by hand: it serves us again`;
    // The token's name: who the decision is audited under.
    const who = DECIDER.replace('@', `-${width}@`);
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    try {
      const page = await context.newPage();
      const shot = (name: string): Promise<Buffer> =>
        page.screenshot({ path: join(env('TH_TEST_DIR'), `console-${name}-${width}.png`), fullPage: true });
      // Sign in with the keyboard: the token field takes the focus (autofocus, which Chromium applies after the
      // page has loaded: wait for it, or the keys go nowhere on a busy machine); type, Enter.
      await page.goto(`${api.url}/console/sign-in`);
      // (A locator, not waitForFunction: the page's CSP forbids the eval a string predicate polls with.)
      await page.locator('#token:focus').waitFor();
      await page.keyboard.type(await api.token(['read', 'decide'], who));
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/fleet$/);

      await page.goto(`${api.url}/console/sites/${site}/decide`);
      expect(await page.getByRole('heading', { name: 'Resume' }).count()).toBe(1);
      expect(await page.getByLabel(/^Cautious: concurrency 8, revisit ×2/).isChecked()).toBe(true);
      expect(await page.locator('main').textContent()).toMatch(/Waiting for a person\s*since .*paused at tick \d+/);
      await shot('decide');

      // The why, then Tab to the resume form's button and Enter: the preview.
      await page.getByLabel('Why you resume (goes into the audit trail)').focus();
      await page.keyboard.type(why);
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Preview resume');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/decide\/preview$/);
      const preview = (await page.locator('main').textContent())!;
      expect(preview).toContain('Nothing has been sent yet');
      expect(preview).toMatch(/Band\s*resisting\s*degrading \(changes\)/);
      // From the controls in force (16, or fewer when the loop throttled before it paused) to cautious 8.
      const before = (await handle.query(stateQuery)).controls!.concurrencyLimit;
      expect(preview).toMatch(new RegExp(String.raw`Concurrency\s*${before}\s*8 \(changes\)`));
      expect(preview).toContain(`target-health decide resume ${site} --who`);
      // Nothing is sent by a preview.
      expect((await handle.query(stateQuery)).awaitingHuman).not.toBeNull();
      await shot('decide-preview');

      await page.getByRole('button', { name: `Confirm: resume ${site}` }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/decide\/done\?decision=/);
      expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe(`Applied: resume (cautious) ${site}`);
      const result = (await page.locator('main').textContent())!;
      expect(result).toContain(`human:${who}`);
      await shot('decide-result');

      // The loop: not waiting, degrading (judging afresh).
      const state = await handle.query(stateQuery);
      expect(state.awaitingHuman).toBeNull();
      expect(state.band).toBe('degrading');
      expect(state.lastDecision).toMatchObject({ kind: 'resume', who, why, mode: { mode: 'cautious' } });
      // What the crawler follows.
      const controls = await fetch(`${api.url}/v1/sites/${site}/controls`, authed(await api.token(['read'])));
      expect(controls.status).toBe(200);
      expect(await controls.json()).toMatchObject({
        site,
        concurrencyLimit: 8,
        revisitMultiplier: 2,
        paused: false,
        canaryOnly: false,
        band: 'degrading',
      });
      // The audit trail, under the token's name.
      const [decision] = await listDecisions(h.pool, site);
      expect(decision).toMatchObject({ kind: 'resume', who, why, via: 'update' });
      const audit = (await controlAudit(h.pool, site)).filter((a) => a.decisionKey === decision!.decisionKey);
      expect(audit.map((a) => [a.actor, a.newControls.paused])).toEqual([[`human:${who}`, false]]);
      expect(audit[0]!.reason).toBe(`resumed by ${who} (cautious): ${why}`);
    } finally {
      await context.close();
    }
  },
);

test('the Fleet page, open in the browser, follows a real loop into the pause without a reload', async () => {
  const site = await prepareSite(h.pool, 'console-fleet-live');
  await send(site, { ok: 100 });
  const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(`${api.url}/console/sign-in`);
    await page.getByLabel('API token').fill(await api.token(['read']));
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/fleet$/);
    await page.goto(`${api.url}/console/fleet?site=${encodeURIComponent(site)}`);
    const band = page.locator('#fleet-results td[data-label="Band"]');
    // Temporal's visibility lists the new loop after a refresh or two: the stream brings it in.
    await page.getByText('Live: this list updates by itself.').waitFor();
    await page.locator('#fleet-results').getByRole('link', { name: site }).waitFor({ timeout: 30_000 });
    expect(await band.textContent()).toMatch(/healthy/);
    // A marker on the window: a reload would lose it. The site's link holds the keyboard's focus.
    await page.evaluate('window.__sameDocument = true');
    await page.getByRole('link', { name: site }).focus();

    await send(site, { hard: 400 });
    await waitForState(handle, `${site} paused by the wall`, (s) => s.awaitingHuman !== null && s.band === 'resisting');
    // The row changes in place: the band, and the person the loop now waits for.
    await page.locator('#fleet-results td[data-label="Band"]', { hasText: 'resisting' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#fleet-results td[data-label="Waiting since"]').textContent()).toMatch(/ago · Decide$/);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    // The update gave the focus back to the same link in the new list.
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe(site);
    await page.screenshot({ path: join(env('TH_TEST_DIR'), 'console-fleet-live-1280.png'), fullPage: true });
  } finally {
    await context.close();
    await handle.terminate('test done').catch(() => undefined);
  }
}, 120_000);
