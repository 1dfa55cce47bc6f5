/**
 * Secrets never leave the configuration (docs/security.md, "Where secrets must never appear"). A site
 * loop runs on a worker wired like production (createWorker: activities, notifier and canary settings
 * read from the environment) whose environment holds secrets — a DATABASE_URL whose password holds
 * `:`, `/`, `@`, `%` and `"` (a real PostgreSQL role: the worker logs in with it), a JSON webhook with a
 * token in its path and query, a Slack webhook with its secret path, proxy credentials in
 * TARGET_HEALTH_ROUTES and in a canary's own `proxy`, a `?token=` in a canary's page URL (its page
 * echoing the URL back) — and goes through notifications (one webhook failing, then delivered) and
 * canaries (through an authenticating proxy, and one refused by it). Then
 * every place people or tools read is searched for each secret: the full histories of the loop and of
 * its delivery workflows (payloads decoded), what the UI's describe shows (search attributes, memo,
 * pending activities with their last failure), every row the loop wrote, and every log line of the
 * product logger. Each secret carries a random core of hex digits, which no encoding or escaping
 * changes: the core may appear nowhere.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { parseCanaryDefinition } from '../../core/canaries/definition';
import { selectorProblem } from '../../server/canary-runner/html';
import { saveCanaries } from '../../server/db/canaries';
import { listNotifications } from '../../server/db/notifications';
import { createPool, type Pool } from '../../server/db/pool';
import { createLogger } from '../../server/logging/logger';
import { createWorker } from '../../worker/create-worker';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import {
  answer,
  type Handler,
  productPage,
  startFixtureServer,
  startForwardProxy,
  type FixtureServer,
  type ForwardProxy,
} from '../kit/http-fixtures';
import { env, eventually, openHarness, type TestHarness } from '../kit/services';

const core = (): string => randomBytes(8).toString('hex');
const CORES = {
  database: core(),
  webhookPath: core(),
  webhookQuery: core(),
  slack: core(),
  routeProxy: core(),
  badProxy: core(),
  canaryProxy: core(),
  pageToken: core(),
};

/**
 * The product page, its canonical link echoing the URL it was asked for (what many shops do): the page's own copy of a
 * canary's `?token=`.
 */
const echoingPage: Handler = (req, res) => {
  const canonical = `http://${req.headers.host ?? ''}${req.url ?? '/'}`.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  res
    .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    .end(productPage().replace(/<link rel="canonical" href="[^"]*">/, `<link rel="canonical" href="${canonical}">`));
};

/** A webhook receiver: `/hook/…` answers 503 until `up`; `/services/…` (Slack) answers 200. */
async function receiver(): Promise<{
  url: string;
  hits: { path: string; status: number }[];
  setUp(up: boolean): void;
  close(): Promise<void>;
}> {
  let up = false;
  const hits: { path: string; status: number }[] = [];
  const drain = (req: IncomingMessage): Promise<void> =>
    new Promise((resolve) => req.on('data', () => undefined).on('end', resolve));
  const server: Server = createServer((req, res) => {
    void drain(req).then(() => {
      const path = req.url ?? '';
      const status = path.startsWith('/hook/') && !up ? 503 : 200;
      hits.push({ path, status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'busy');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    setUp: (v) => (up = v),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Every Uint8Array (payload data, search attribute values) as UTF-8 text, so the search sees what the UI shows. */
function decoded(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(decoded);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decoded(v)]));
  return value;
}

/** Histories and descriptions (search attributes, memo, pending activities) of every workflow on the task queue. */
async function temporalText(
  client: Client,
  taskQueue: string,
  expected: number,
): Promise<{ text: string; workflows: string[] }> {
  const runs = await eventually(async () => {
    const found: Array<{ workflowId: string; runId: string }> = [];
    for await (const wf of client.workflow.list({ query: `TaskQueue = "${taskQueue}"` }))
      found.push({ workflowId: wf.workflowId, runId: wf.runId });
    return found.length >= expected ? found : undefined;
  }, `${expected} workflows listed on the task queue`);
  const parts: string[] = [];
  for (const { workflowId, runId } of runs) {
    const handle: WorkflowHandle = client.workflow.getHandle(workflowId, runId);
    parts.push(JSON.stringify(decoded(await handle.fetchHistory())));
    const description = await handle.describe();
    parts.push(
      JSON.stringify(
        decoded({ searchAttributes: description.typedSearchAttributes, memo: description.memo, raw: description.raw }),
      ),
    );
  }
  return { text: parts.join('\n'), workflows: runs.map((r) => r.workflowId) };
}

async function databaseText(pool: Pool, site: string): Promise<string> {
  const tables = [
    'sites',
    'assessments',
    'site_controls',
    'control_audit',
    'decisions',
    'notifications',
    'canary_runs',
    'request_events',
  ];
  const parts: string[] = [];
  for (const table of tables)
    parts.push(JSON.stringify((await pool.query(`SELECT * FROM ${table} WHERE site = $1`, [site])).rows));
  parts.push(
    JSON.stringify(
      (
        await pool.query(
          'SELECT d.* FROM notification_deliveries d JOIN notifications n USING (notification_key) WHERE n.site = $1',
          [site],
        )
      ).rows,
    ),
  );
  return parts.join('\n');
}

function leaked(text: string): string[] {
  return Object.entries(CORES)
    .filter(([, c]) => text.includes(c))
    .map(([name]) => name);
}

let h: TestHarness;
let pages: FixtureServer;
let proxy: ForwardProxy;
let ownProxy: ForwardProxy;
let role: string;
let secretDatabaseUrl: string;

beforeAll(async () => {
  h = await openHarness();
  pages = await startFixtureServer({ '/p/known': answer.html(productPage()), '/p/echo': echoingPage });
  proxy = await startForwardProxy({ auth: { user: 'crawler', password: `Px:${CORES.routeProxy}/p@ss%"` } });
  ownProxy = await startForwardProxy({ auth: { user: 'crawler', password: `Cp:${CORES.canaryProxy}@%` } });
  role = `th_sec_${core()}`;
  // A login role whose password holds what breaks naive URL handling; the worker's pool logs in with it.
  const password = `Db:${CORES.database}/p@ss%w"rd`;
  const admin = await h.pool.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN SUPERUSER PASSWORD ${admin.escapeLiteral(password)}`);
  } finally {
    admin.release();
  }
  const server = new URL(env('DATABASE_URL'));
  secretDatabaseUrl = `postgres://${role}:${encodeURIComponent(password)}@${server.host}${server.pathname}`;
});

afterAll(async () => {
  await proxy?.close();
  await ownProxy?.close();
  await pages?.close();
  // Partitions the worker created belong to the role: hand them over before dropping it.
  await h.pool.query(`REASSIGN OWNED BY ${role} TO CURRENT_USER`);
  await h.pool.query(`DROP ROLE ${role}`);
  await h.close();
});

test(
  'no secret of the environment reaches histories, ' + 'search attributes, the UI, notifications, rows or logs',
  async () => {
    const hooks = await receiver();
    const proxyUrl = proxy.url; // http://crawler:<encoded password>@127.0.0.1:port
    const badProxyUrl = `http://crawler:${encodeURIComponent(`Bad:${CORES.badProxy}/@x`)}@127.0.0.1:${proxy.port}`;
    const canaryProxyUrl = ownProxy.url;
    // What the worker's activities read from the environment when they are created (jest gives this file its own
    // process.env).
    Object.assign(process.env, {
      TARGET_HEALTH_WEBHOOK_URL: `${hooks.url}/hook/${CORES.webhookPath}?token=${CORES.webhookQuery}`,
      TARGET_HEALTH_SLACK_WEBHOOK_URL: `${hooks.url}/services/T0/B0/${CORES.slack}`,
      TARGET_HEALTH_ROUTES: JSON.stringify({ 'secure-route': proxyUrl, 'refused-route': badProxyUrl }),
      TARGET_HEALTH_CANARY_ALLOWED_TARGETS: '127.0.0.1',
    });

    const site = await prepareSite(h.pool, 'secrets');
    await ingestNow(h.pool, site, { ok: 100 });
    const definitions = [
      {
        name: 'via-route',
        url: `${pages.origin}/p/known`,
        route: 'secure-route',
        interval: '30s',
        expect: [{ status: 200 }],
      },
      {
        name: 'refused-by-proxy',
        url: `${pages.origin}/p/known`,
        route: 'refused-route',
        interval: '30s',
        expect: [{ status: 200 }],
      },
      {
        name: 'own-proxy',
        url: `${pages.origin}/p/known`,
        proxy: canaryProxyUrl,
        interval: '30s',
        expect: [{ status: 200 }],
      },
      // Accepted (docs/security.md): the value is stored with the definition and masked everywhere else.
      {
        name: 'page-token',
        url: `${pages.origin}/p/echo?lang=en&token=${CORES.pageToken}`,
        interval: '30s',
        expect: [{ css: 'link[rel=canonical]', attr: 'href', matches: '^http://' }],
      },
    ];
    await saveCanaries(
      h.pool,
      definitions.map((d) => {
        const parsed = parseCanaryDefinition(d, { selectorProblem });
        if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
        return { site, definition: parsed.definition, origin: '' };
      }),
    );

    const lines: string[] = [];
    const logger = createLogger(
      'debug',
      'security-test',
      new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
    );
    const workerPool = createPool(secretDatabaseUrl, 4);
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Already installed in this Jest worker process.
    }
    const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
    const worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue: h.taskQueue,
      pool: workerPool,
      logger,
      workflowBundlePath: env('TH_TEST_WORKFLOW_BUNDLE'),
    });
    let whileFailing = '';
    let rowsWhileFailing = '';
    try {
      await worker.runUntil(async () => {
        const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
        const withCanaries = await waitForState(
          handle,
          'four canary results',
          (s) => (s.canaries?.evidence.length ?? 0) === 4,
        );
        // The route with the right credentials got through the authenticating proxy; the wrong ones did not.
        const byName = Object.fromEntries(withCanaries.canaries!.evidence.map((e) => [e.name, e]));
        expect(byName['via-route']).toMatchObject({ result: 'pass', route: 'route secure-route' });
        expect(byName['own-proxy']).toMatchObject({ result: 'pass', route: `proxy 127.0.0.1:${ownProxy.port}` });
        expect(byName['refused-by-proxy']!.result).toBe('error');
        // The page got the token and echoed it; the loop's state shows the URL and the echo masked.
        expect(byName['page-token']).toMatchObject({
          result: 'pass',
          route: 'direct',
          url: `${pages.origin}/p/echo?lang=en&token=***`,
        });
        expect(byName['page-token']!.evidence).toContain('/p/echo?lang=en&token=***');

        await ingestNow(h.pool, site, { hard: 60, ok: 40 });
        await waitForState(handle, 'degrading', (s) => s.band === 'degrading');
        await eventually(
          () => Promise.resolve(hooks.hits.filter((x) => x.status === 503).length >= 2 ? true : undefined),
          'two failed JSON webhook attempts',
        );
        await eventually(
          async () =>
            (await listNotifications(h.pool, site))[0]?.lastError?.includes('answered 503') ? true : undefined,
          'the failure recorded in the outbox',
        );
        whileFailing = (await temporalText(h.client, h.taskQueue, 2)).text;
        rowsWhileFailing = await databaseText(h.pool, site);

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
      await workerPool.end();
      await hooks.close();
    }
    const temporal = await temporalText(h.client, h.taskQueue, 2);
    const afterDelivery = temporal.text;
    const rows = await databaseText(h.pool, site);
    const logs = lines.join('');

    // The places searched hold what people read there: the search could find a secret if one were there.
    // (Booleans, not toContain: a failure must not print megabytes of history.)
    expect(temporal.workflows.some((id) => id.startsWith('notify:'))).toBe(true);
    expect(afterDelivery.includes('route secure-route')).toBe(true);
    expect(whileFailing.includes('answered 503')).toBe(true);
    expect(rowsWhileFailing.includes('answered 503')).toBe(true);
    expect(logs.includes('notification delivery failed; will retry')).toBe(true);
    expect(logs.includes('"notification"')).toBe(true);
    expect(hooks.hits.some((x) => x.path.includes(CORES.slack))).toBe(true); // the secret was really in use
    expect(proxy.seen.some((x) => x.headers['proxy-authorization'] !== undefined)).toBe(true);
    expect(pages.requests.some((r) => r.target.includes(`token=${CORES.pageToken}`))).toBe(true);
    expect(afterDelivery.includes('/p/echo?lang=en&token=***')).toBe(true);
    expect(rows.includes('token=***')).toBe(true); // the run rows hold the masked echo
    const canaryRows = JSON.stringify(
      (await h.pool.query('SELECT definition FROM canaries WHERE site = $1', [site])).rows,
    );
    // A canary's own `proxy` and its page URL are stored with it (docs/security.md says so) —
    // and this search finds them there.
    expect(leaked(canaryRows)).toEqual(['canaryProxy', 'pageToken']);

    expect({
      whileFailing: leaked(whileFailing),
      rowsWhileFailing: leaked(rowsWhileFailing),
      afterDelivery: leaked(afterDelivery),
      rows: leaked(rows),
      logs: leaked(logs),
    }).toEqual({
      whileFailing: [],
      rowsWhileFailing: [],
      afterDelivery: [],
      rows: [],
      logs: [],
    });
  },
);
