/**
 * The Temporal UI as a person on call meets it: a dev server with its web UI (as `npm start` runs it, on
 * free ports), a site the loop paused and that waits for a person, and Debian's Chromium (headless,
 * driven by playwright-core) opening the link `target-health status` prints. The workflow's page shows,
 * in its current details, the band, the reason and the exact command to decide. The link is the one the
 * notifications carry and starts with the UI address the dev server reports (what the banner prints).
 *
 * Its own dev server (the shared one of the integration tests is headless), the shared PostgreSQL.
 */
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { type Browser, chromium } from 'playwright-core';
import { workflowIdForSite } from '../../core/common/names';
import { decideCommand } from '../../core/control/details';
import { listNotifications } from '../../server/db/notifications';
import { ensureChromium } from '../../stack/chromium';
import { freePort } from '../../stack/free-port';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { type DevServerHandle, startTemporalDevServer } from '../../stack/temporal-dev-server';
import { createWorker } from '../../worker/create-worker';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { CLI, cleanEnv, run } from '../kit/processes';
import { env, eventually, openHarness, testLogger, type TestHarness } from '../kit/services';

const quiet = { info: () => undefined, warn: (m: string) => process.stderr.write(`[ui e2e] ${m}\n`) };

let h: TestHarness;
let server: DevServerHandle;
let uiPort: number;
let connection: Connection;
let workerConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let browser: Browser;
let site: string;
let reason: string;

beforeAll(async () => {
  const found = ensureChromium();
  if (found.installMs > 0) process.stderr.write(`chromium installed in ${found.installMs} ms\n`);
  h = await openHarness();
  uiPort = await freePort();
  server = await startTemporalDevServer({
    cli: await ensureTemporalCli(quiet),
    port: await freePort(),
    uiPort,
    namespace: 'default',
    logFile: join(env('TH_TEST_DIR'), `temporal-ui-${uiPort}.log`),
  });
  connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: 'default' });
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this Jest worker process.
  }
  workerConnection = await NativeConnection.connect({ address: server.address });
  // The worker's notification links from its environment, as a worker started without `npm start` has
  // them: TEMPORAL_UI_PORT set, no TEMPORAL_UI_URL.
  const saved = { url: process.env.TEMPORAL_UI_URL, port: process.env.TEMPORAL_UI_PORT };
  delete process.env.TEMPORAL_UI_URL;
  process.env.TEMPORAL_UI_PORT = String(uiPort);
  try {
    worker = await createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue: h.taskQueue,
      pool: h.pool,
      logger: testLogger,
      workflowBundlePath: env('TH_TEST_WORKFLOW_BUNDLE'),
    });
  } finally {
    if (saved.url !== undefined) process.env.TEMPORAL_UI_URL = saved.url;
    if (saved.port === undefined) delete process.env.TEMPORAL_UI_PORT;
    else process.env.TEMPORAL_UI_PORT = saved.port;
  }
  running = worker.run();

  // A site the loop pauses: healthy, degrading, then resisting — waiting for a person.
  site = await prepareSite(h.pool, 'ui-e2e');
  await ingestNow(h.pool, site, { ok: 100 });
  const { handle } = await startHealthySite(client, h.taskQueue, loopInput(site));
  await ingestNow(h.pool, site, { hard: 60, ok: 40 });
  await waitForState(handle, 'degrading', (s) => s.band === 'degrading');
  await ingestNow(h.pool, site, { challenge: 100, soft: 100 });
  const paused = await waitForState(
    handle,
    'resisting and waiting',
    (s) => s.band === 'resisting' && s.awaitingHuman !== null,
  );
  reason = paused.awaitingHuman!.reason;

  browser = await chromium.launch({ executablePath: found.executablePath, args: found.args, headless: true });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await connection?.close();
  worker?.shutdown();
  await running;
  await workerConnection?.close();
  await server?.stop();
  await h?.close();
});

test(
  "the link `status` prints opens the loop's page: " + 'band, reason and the decide command lead its current details',
  async () => {
    // The CLI's link without TEMPORAL_UI_URL: the UI the dev server serves on TEMPORAL_UI_PORT.
    const status = await run(
      CLI,
      ['status', site],
      cleanEnv({
        TEMPORAL_ADDRESS: server.address,
        DATABASE_URL: env('DATABASE_URL'),
        TEMPORAL_UI_PORT: String(uiPort),
      }),
    );
    expect(status.code).toBe(0);
    const link = status.stdout.trimEnd().split('\n').at(-1)!;
    expect(link).toBe(`${server.uiUrl!}/namespaces/default/workflows/${encodeURIComponent(workflowIdForSite(site))}`);
    // The notifications carry the same link.
    const notice = await eventually(
      async () => (await listNotifications(h.pool, site)).find((n) => n.kind === 'resisting'),
      'the resisting notification',
    );
    expect((notice.payload as { link: string }).link).toBe(link);

    const page = await browser.newPage();
    try {
      await page.goto(link);
      // The run's summary and current details are under its "User Metadata" tab; the current details are
      // the workflow's metadata query, answered by the worker: wait for them.
      await page.getByText('User Metadata', { exact: true }).click();
      // The UI renders the markdown in a frame of its own, beside the "Current Details" heading.
      const details = page
        .locator('xpath=//h3[normalize-space()="Current Details"]/ancestor::div[.//iframe][1]//iframe')
        .contentFrame();
      await details
        .getByText(decideCommand(site, 'resume'), { exact: true })
        .waitFor({ state: 'visible', timeout: 60_000 });
      await details.getByText(decideCommand(site, 'stop'), { exact: true }).waitFor({ state: 'visible' });
      await details.getByText(`Paused: ${reason}`, { exact: true }).waitFor({ state: 'visible' });
      // The band leads, worded as every surface words it: the first paragraph, before the reasons and the
      // commands. A refusal rule's key in the pause's reason means the rule paused it, and the band names it.
      const rule = /\b(total|majority)_refusal\b/.exec(reason)?.[1];
      const ruleText = rule === undefined ? '' : `paused by the ${rule}-refusal rule; `;
      const byLoop = rule === undefined ? ' \\(paused by the loop\\)' : '';
      const scores = '(score [\\d.]+|no score)(, smoothed [\\d.]+)?( \\(the score alone says \\w+\\))?';
      const first = details.locator('p').first();
      expect(await first.innerText()).toMatch(
        new RegExp(
          `^resisting: ${ruleText}${scores} — waiting for a person since \\S+${byLoop} · ` +
            `${site.replace(/\./g, '\\.')}$`,
        ),
      );
    } catch (err) {
      await page
        .screenshot({ path: join(env('TH_TEST_DIR'), `temporal-ui-${uiPort}.png`), fullPage: true })
        .catch(() => undefined);
      throw err;
    } finally {
      await page.close();
    }
  },
  120_000,
);
