/**
 * Notifications through the pluggable notifier with real HTTP webhooks (a local server standing in for
 * a JSON receiver and a Slack-compatible one): a webhook that fails is retried with backoff, by its own
 * delivery workflow, while the loop goes on ticking and acting; each channel receives the notification
 * once (Slack is not called again when only the JSON webhook failed); a 4xx is not retried.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createActivities } from '../../activities';
import { listNotifications } from '../../server/db/notifications';
import { createNotifier } from '../../server/notifications/notifier';
import {
  createLoopWorker,
  ingestNow,
  loopInput,
  newSite,
  prepareSite,
  registerSite,
  startHealthySite,
  waitForState,
} from '../kit/control-loop';
import pino from 'pino';
import { eventually, openHarness, type TestHarness } from '../kit/services';

// Delivery failures are the point of these tests: keep their warnings out of the test output.
const testLogger = pino({ level: 'silent' });

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h.close());

interface Received {
  path: string;
  idempotencyKey: string | undefined;
  body: Record<string, unknown>;
  status: number;
}

/** A webhook receiver: `/json` answers 503 until `up` is set, `/slack` answers 200, `/bad` answers 400. */
async function receiver(): Promise<{
  url: string;
  received: Received[];
  setUp(up: boolean): void;
  close(): Promise<void>;
}> {
  let up = false;
  const received: Received[] = [];
  const read = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let data = '';
      req.on('data', (c: Buffer) => (data += c.toString()));
      req.on('end', () => resolve(data));
    });
  const server: Server = createServer((req, res) => {
    void read(req).then((text) => {
      const path = req.url ?? '';
      const status = path === '/bad' ? 400 : path === '/json' && !up ? 503 : 200;
      received.push({
        path,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        body: JSON.parse(text) as Record<string, unknown>,
        status,
      });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    setUp: (v) => (up = v),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test('a failing webhook is retried without holding the loop; each channel gets each notification once', async () => {
  const hooks = await receiver();
  const site = await prepareSite(h.pool, 'hook');
  await ingestNow(h.pool, site, { ok: 100 });
  const notifier = createNotifier(
    { webhookUrl: `${hooks.url}/json`, slackWebhookUrl: `${hooks.url}/slack` },
    testLogger,
  );
  const { worker, connection } = await createLoopWorker(h, {
    notifier,
    uiUrl: 'http://ui.test',
    consoleUrl: 'https://health.test',
    logger: testLogger,
  });
  try {
    await worker.runUntil(async () => {
      const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
      await ingestNow(h.pool, site, { hard: 60, ok: 40 });
      const entered = await waitForState(handle, 'degrading', (s) => s.band === 'degrading');
      // The JSON webhook keeps failing; meanwhile the loop ticks on and keeps throttling.
      await eventually(
        () => Promise.resolve(hooks.received.filter((r) => r.path === '/json').length >= 2 ? true : undefined),
        'two failed webhook attempts',
      );
      const later = await waitForState(
        handle,
        'more throttling while the webhook is down',
        (s) => s.tick >= entered.tick + 3 && (s.controls?.concurrencyLimit ?? 99) < entered.controls!.concurrencyLimit,
      );
      expect(later.band).toBe('degrading');
      const pending = (await listNotifications(h.pool, site))[0]!;
      expect(pending).toMatchObject({
        kind: 'degrading',
        deliveredAt: null,
        channels: { log: 'delivered', slack: 'delivered' },
      });
      expect(pending.lastError).toContain('answered 503');

      hooks.setUp(true);
      await eventually(
        async () => ((await listNotifications(h.pool, site))[0]?.deliveredAt ? true : undefined),
        'delivered once the webhook is back',
        60_000,
      );
      await handle.terminate('test done');
    });
  } finally {
    await connection.close();
    await hooks.close();
  }
  const json = hooks.received.filter((r) => r.path === '/json');
  const slack = hooks.received.filter((r) => r.path === '/slack');
  const key = (await listNotifications(h.pool, site))[0]!.notificationKey;
  expect(json.filter((r) => r.status === 200)).toHaveLength(1);
  expect(json.every((r) => r.idempotencyKey === key)).toBe(true);
  expect(json[0]!.body).toMatchObject({
    key,
    kind: 'degrading',
    site,
    recipient: `owner@${site}`,
    evidence: { band: 'degrading' },
  });
  expect(slack).toHaveLength(1);
  expect(String(slack[0]!.body.text)).toContain(`${site} is degrading`);
  expect(String(slack[0]!.body.text)).toContain(
    `<https://health.test/console/sites/${encodeURIComponent(site)}|Open ${site} in the console> · ` +
      '<http://ui.test/namespaces/default/workflows/',
  );
});

test('a webhook answering 4xx is not retried: the channel is marked rejected', async () => {
  const hooks = await receiver();
  const site = newSite('hook');
  await registerSite(h.pool, site);
  try {
    const acts = createActivities({
      pool: h.pool,
      logger: testLogger,
      uiUrl: 'http://ui.test',
      notifier: createNotifier({ webhookUrl: `${hooks.url}/bad` }, testLogger),
    });
    const key = `${site}/c/1/notify-paused`;
    await acts.applyActions({
      site,
      workflowId: `site-health:${site}`,
      chainId: 'c',
      actionKey: `${site}/c/1/controls`,
      assessmentKey: null,
      actor: 'control-loop',
      controls: null,
      decision: null,
      notices: [
        {
          key,
          draft: {
            kind: 'paused',
            severity: 'warning',
            audience: 'owner',
            title: 'paused',
            text: 'x',
            evidence: {
              tick: 1,
              assessedAt: null,
              assessmentKey: null,
              score: null,
              smoothedScore: null,
              band: 'healthy',
              scoredBand: 'healthy',
              parserHealth: null,
              reasons: [],
              signals: [],
              routes: null,
              totalRefusal: null,
              requests: null,
              controls: null,
              awaitingSince: null,
              recentHistory: [],
              canaries: [],
            },
          },
        },
      ],
    });
    const result = await acts.deliverNotification({ notificationKey: key });
    expect(result).toEqual({ notificationKey: key, delivered: ['log'], failed: ['webhook'] });
    await acts.deliverNotification({ notificationKey: key });
    expect(hooks.received).toHaveLength(1);
    const [n] = await listNotifications(h.pool, site);
    expect(n).toMatchObject({ channels: { log: 'delivered', webhook: 'rejected' } });
    expect(n!.lastError).toBe('rejected by webhook');
  } finally {
    await hooks.close();
  }
});
