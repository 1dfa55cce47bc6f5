/**
 * Canaries inside the control loop, on the real dev server and PostgreSQL, against a real local HTTP
 * server: a site paused by hand keeps running its canaries and shows their latest results in its
 * state; a canary returning a normal-looking page with the wrong value puts a healthy site in at
 * least the degrading band with canary_mismatch as its first reason.
 */
import { parseCanaryDefinition } from '../../canaries/definition';
import { selectorProblem } from '../../canary-runner/html';
import { saveCanaries } from '../../db/canaries';
import { pauseUpdate } from '../../control/messages';
import { ingestNow, loopInput, prepareSite, startHealthySite, startLoop, waitForState } from '../helpers/control-loop';
import { answer, productPage, KNOWN_PRICE, startFixtureServer, type FixtureServer } from '../helpers/http-fixtures';
import { createTestWorker, openHarness, type TestHarness } from '../helpers/services';

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
  const parsed = parseCanaryDefinition({ name: 'price', url: `${server.origin}${path}`, interval: '30s', expect: [{ status: 200 }, { css: '.price', equals: KNOWN_PRICE }] }, { selectorProblem });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  await saveCanaries(h.pool, [{ site, definition: parsed.definition, origin: '' }]);
}

test('a paused site keeps running its canaries and shows their results in its state', async () => {
  const site = await prepareSite(h.pool, 'paused-canary');
  await ingestNow(h.pool, site, { ok: 100 });
  const { worker, connection } = await createTestWorker(h);
  await worker.runUntil(async () => {
    const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
    const paused = await handle.executeUpdate(pauseUpdate, { args: [{ who: 'dana@example.com', why: 'checking the terms' }] });
    expect(paused.controls).toMatchObject({ paused: true, canaryOnly: true });
    const pausedAt = Date.parse(paused.decidedAt);

    // Defined after the pause: any run of it happened while the site was paused.
    await defineCanary(site, '/p/known');
    const s = await waitForState(handle, 'canary results in the state', (st) => (st.canaries?.evidence.length ?? 0) > 0);
    expect(s.awaitingHuman).not.toBeNull();
    expect(s.controls).toMatchObject({ paused: true, canaryOnly: true });
    expect(s.canaries!.window).toMatchObject({ runs: 1, failures: 0, mismatches: 0 });
    expect(s.canaries!.evidence[0]).toMatchObject({ canaryId: `${site}/price`, result: 'pass' });
    expect(Date.parse(s.canaries!.evidence[0]!.ranAt)).toBeGreaterThanOrEqual(pausedAt);

    // Its fetch went into the signal store as canary traffic: what the paused loop keeps judging.
    const { rows } = await h.pool.query<{ n: string }>("SELECT sum(canary_runs) AS n FROM rollup_minute WHERE site = $1 AND route_key = '*'", [site]);
    expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(1);
    await handle.terminate('test done');
  });
  await connection.close();
});

test('a wrong value on a normal-looking page puts a healthy site in at least degrading, canary_mismatch first', async () => {
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
});
