/**
 * Canaries inside the control loop, on the real dev server and PostgreSQL, against a real local HTTP
 * server: a site paused by hand keeps running its canaries and shows their latest results in its
 * state; a canary returning a normal-looking page with the wrong value puts a healthy site in at
 * least the degrading band with canary_mismatch as its first reason; the canary requests a crawler
 * sends itself (`canary: true` events) are canary evidence in the state, `status`, the run's details
 * and notifications, apart from the product's own canary fetches.
 */
import { parseCanaryDefinition } from '../../core/canaries/definition';
import { selectorProblem } from '../../server/canary-runner/html';
import { saveCanaries } from '../../server/db/canaries';
import { statusSchema } from '../../client/on-call/status';
import { pauseUpdate } from '../../loop/messages';
import { listNotifications } from '../../server/db/notifications';
import { ingestEvents } from '../../server/db/signal-store';
import { ingestNow, loopInput, prepareSite, startHealthySite, startLoop, waitForState } from '../kit/control-loop';
import { answer, productPage, KNOWN_PRICE, startFixtureServer, type FixtureServer } from '../kit/http-fixtures';
import { CLI, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

// The fixture server listens on 127.0.0.1: the operator's explicit opt-in for canaries to reach it. Set
// before the worker's activities read their settings (jest gives each test file its own process.env).
process.env.TARGET_HEALTH_CANARY_ALLOWED_TARGETS = '127.0.0.1';

let h: TestHarness;
let server: FixtureServer;
beforeAll(async () => {
  h = await openHarness();
  server = await startFixtureServer({
    '/p/known': answer.html(productPage()),
    '/p/changed': answer.html(productPage('$119.95')),
  });
});
afterAll(async () => {
  await server.close();
  await h.close();
});

async function defineCanary(site: string, path: string): Promise<void> {
  const parsed = parseCanaryDefinition(
    {
      name: 'price',
      url: `${server.origin}${path}`,
      interval: '30s',
      expect: [{ status: 200 }, { css: '.price', equals: KNOWN_PRICE }],
    },
    { selectorProblem },
  );
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  await saveCanaries(h.pool, [{ site, definition: parsed.definition, origin: '' }]);
}

test('a paused site keeps running its canaries and shows their results in its state', async () => {
  const site = await prepareSite(h.pool, 'paused-canary');
  await ingestNow(h.pool, site, { ok: 100 });
  const { worker, connection } = await createTestWorker(h);
  await worker.runUntil(async () => {
    const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
    const paused = await handle.executeUpdate(pauseUpdate, {
      args: [{ who: 'dana@example.com', why: 'checking the terms' }],
    });
    expect(paused.controls).toMatchObject({ paused: true, canaryOnly: true });
    const pausedAt = Date.parse(paused.decidedAt);

    // Defined after the pause: any run of it happened while the site was paused.
    await defineCanary(site, '/p/known');
    const s = await waitForState(
      handle,
      'canary results in the state',
      (st) => (st.canaries?.evidence.length ?? 0) > 0,
    );
    expect(s.awaitingHuman).not.toBeNull();
    expect(s.controls).toMatchObject({ paused: true, canaryOnly: true });
    expect(s.canaries!.window).toMatchObject({ runs: 1, failures: 0, mismatches: 0 });
    expect(s.canaries!.evidence[0]).toMatchObject({ canaryId: `${site}/price`, result: 'pass' });
    expect(Date.parse(s.canaries!.evidence[0]!.ranAt)).toBeGreaterThanOrEqual(pausedAt);

    // Its fetch went into the signal store as canary traffic: what the paused loop keeps judging.
    const { rows } = await h.pool.query<{ n: string }>(
      "SELECT sum(canary_runs) AS n FROM rollup_minute WHERE site = $1 AND route_key = '*'",
      [site],
    );
    expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(1);
    await handle.terminate('test done');
  });
  await connection.close();
});

test(
  'a wrong value on a normal-looking page puts a healthy site in at least degrading, ' + 'canary_mismatch first',
  async () => {
    const site = await prepareSite(h.pool, 'mismatch');
    await ingestNow(h.pool, site, { ok: 100 });
    await defineCanary(site, '/p/changed');
    const { worker, connection } = await createTestWorker(h);
    await worker.runUntil(async () => {
      const handle = await startLoop(h.client, h.taskQueue, loopInput(site));
      const s = await waitForState(handle, 'degrading by the canary floor', (st) => st.band === 'degrading');
      // Traffic alone says healthy; the canary is what moved it.
      expect(s.score).toBeGreaterThanOrEqual(80);
      expect(s.reasons[0]).toBe('canary_mismatch');
      expect(s.canaries!.window.mismatches).toBe(1);
      expect(s.canaries!.evidence[0]).toMatchObject({ result: 'mismatch' });
      expect(s.canaries!.evidence[0]!.evidence).toContain('$119.95');
      await handle.terminate('test done');
    });
    await connection.close();
  },
);

test(
  'canary requests the crawler sends while paused are canary evidence: ' + 'state, status, details and reminders',
  async () => {
    const site = await prepareSite(h.pool, 'crawler-canary');
    await ingestNow(h.pool, site, { ok: 100 });
    const { worker, connection } = await createTestWorker(h);
    await worker.runUntil(async () => {
      // Reminders every second: each carries the tick's evidence.
      const { handle } = await startHealthySite(
        h.client,
        h.taskQueue,
        loopInput(site, { policy: { ...loopInput(site).policy, reminderIntervalMs: 1_000 } }),
      );
      await handle.executeUpdate(pauseUpdate, { args: [{ who: 'dana@example.com', why: 'checking the terms' }] });
      // A canary of the product's: its fetch is canary traffic in the store too, and is not the crawler's.
      await defineCanary(site, '/p/known');
      // The crawler's own canaries while paused: 20 requests in the last whole minute, 5 of them refused.
      const t = Math.floor(Date.now() / 60_000) * 60_000 - 1_000;
      const events = Array.from({ length: 20 }, (_, i) => ({
        eventId: `crawler-canary-${i}`,
        ts: t + i,
        site,
        route: {},
        latencyMs: 120,
        canary: true,
        status: i < 5 ? 403 : 200,
        bytes: 5_000,
      }));
      expect((await ingestEvents(h.pool, events)).rejected).toEqual([]);

      const s = await waitForState(handle, "the crawler's canaries in the latest assessment", (st) => {
        const a = st.lastAssessment as { crawlerCanaries?: { requests: number } } | null;
        return a?.crawlerCanaries?.requests === 20 && (st.canaries?.window.runs ?? 0) === 1;
      });
      expect((s.lastAssessment as { crawlerCanaries?: unknown }).crawlerCanaries).toEqual({ requests: 20, failed: 5 });
      // The window's bounds are the tick's: `status` below may read a later tick than the state above (one a
      // second), so the texts are matched by shape; the counts stay (the events sit inside every such window).
      const words = /^ {11}20 canary requests from the crawler \d\d:\d\d–\d\d:\d\dZ: 15 ok, 5 refused or failed$/;

      // The run's current details (the Temporal UI) show both kinds of canary.
      const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(metadata.currentDetails).toMatch(
        joinRegExp(
          /\| canaries \| 1 of the product's counted, 0 failed, 0 mismatched; /,
          /20 canary requests from the crawler \d\d:\d\d–\d\d:\d\dZ: 15 ok, 5 refused or failed \|/,
        ),
      );

      // A reminder sent from now on carries them among its canary lines.
      const reminder = await eventuallyReminder(site);
      expect(
        reminder.some((line) =>
          /^CRAWLER 20 canary requests from the crawler \d\d:\d\d–\d\d:\d\dZ: 15 ok, 5 refused or failed$/.test(line),
        ),
      ).toBe(true);

      // `status`: with the product's canary and the crawler's, in JSON and in text.
      const cliEnv = cleanEnv({
        TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
        DATABASE_URL: env('DATABASE_URL'),
        TEMPORAL_TASK_QUEUE: h.taskQueue,
      });
      const json = await run(CLI, ['status', site, '--json'], cliEnv);
      expect(json.code).toBe(0);
      const status = statusSchema.parse(JSON.parse(json.stdout));
      expect(status.explained.canaries.crawler).toMatchObject({ requests: 20, failed: 5 });
      expect(status.explained.latest!.crawlerCanaries).toMatchObject({ requests: 20, failed: 5 });
      expect(status.explained.next.why).toContain('; 20 canary requests from the crawler ');
      const text = await run(CLI, ['status', site], cliEnv);
      expect(text.stdout.split('\n').some((line) => words.test(line))).toBe(true);
      await handle.terminate('test done');
    });
    await connection.close();
  },
  120_000,
);

/** The canary lines of the first reminder stored for `site` that carries the crawler's canaries. */
function eventuallyReminder(site: string): Promise<string[]> {
  return eventually(async () => {
    const reminders = (await listNotifications(h.pool, site)).filter((n) => n.kind === 'reminder');
    return reminders
      .map((n) => (n.payload as { evidence: { canaries: string[] } }).evidence.canaries)
      .find((l) => l.some((x) => x.startsWith('CRAWLER ')));
  }, "a reminder with the crawler's canaries");
}
