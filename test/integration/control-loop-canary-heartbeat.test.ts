/**
 * A site with canaries on the real worker entry (`node dist/worker/main.js`) and the dev server: its
 * log holds no `Activity heartbeat failed … UnknownActivity`. The canaries run
 * inside the tick's assessment, a local activity, which cannot heartbeat: the server has no record of
 * it, so each heartbeat sent for it was refused and logged, after every canary of every tick.
 */
import { randomUUID } from 'node:crypto';
import { parseCanaryDefinition } from '../../core/canaries/definition';
import { selectorProblem } from '../../server/canary-runner/html';
import { saveCanaries } from '../../server/db/canaries';
import { ingestNow, loopInput, prepareSite, startLoop, waitForState } from '../kit/control-loop';
import { answer, productPage, KNOWN_PRICE, startFixtureServer, type FixtureServer } from '../kit/http-fixtures';
import { WORKER, cleanEnv, startUntil, waitForExit } from '../kit/processes';
import { env, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let server: FixtureServer;
beforeAll(async () => {
  h = await openHarness();
  server = await startFixtureServer({ '/p/known': answer.html(productPage()) });
});
afterAll(async () => {
  await server.close();
  await h.close();
});

test('a loop running canaries logs no heartbeat failure, and its canaries run and count', async () => {
  // Names without "heartbeat" in them: the log lines carry both.
  const taskQueue = `canary-hb-${randomUUID()}`;
  const site = await prepareSite(h.pool, 'canary-hb');
  await ingestNow(h.pool, site, { ok: 100 });
  // Three canaries: three progress heartbeats per tick that runs them.
  for (const name of ['price-a', 'price-b', 'price-c']) {
    const parsed = parseCanaryDefinition(
      {
        name,
        url: `${server.origin}/p/known`,
        interval: '30s',
        expect: [{ status: 200 }, { css: '.price', equals: KNOWN_PRICE }],
      },
      { selectorProblem },
    );
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    await saveCanaries(h.pool, [{ site, definition: parsed.definition, origin: '' }]);
  }
  const worker = await startUntil(
    WORKER,
    // The fixture server listens on 127.0.0.1: the operator's opt-in for canaries to reach it.
    cleanEnv({
      TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
      DATABASE_URL: env('DATABASE_URL'),
      TEMPORAL_TASK_QUEUE: taskQueue,
      LOG_LEVEL: 'info',
      TARGET_HEALTH_CANARY_ALLOWED_TARGETS: '127.0.0.1',
    }),
    /worker polling/,
    120_000,
  );
  try {
    const handle = await startLoop(h.client, taskQueue, loopInput(site));
    const ran = await waitForState(
      handle,
      'the three canaries run and counted',
      (s) => s.canaries?.window.runs === 3,
      60_000,
    );
    expect(ran.canaries!.evidence.map((e) => e.result)).toEqual(['pass', 'pass', 'pass']);
    // Five more ticks after the runs: time for any refused heartbeat to be reported.
    await waitForState(handle, 'five ticks after the canaries ran', (s) => s.tick >= ran.tick + 5, 60_000);
    await handle.terminate('test done');
  } finally {
    worker.child.kill('SIGTERM');
    await waitForExit(worker.child);
  }
  const lines = worker
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '');
  expect(lines.filter((l) => /heartbeat|UnknownActivity/i.test(l))).toEqual([]);
  // The log was read: the worker's own lines are there.
  expect(lines.some((l) => l.includes('worker polling'))).toBe(true);
});
