/**
 * `target-health start` on a site whose loop already runs: the same settings (or none typed) → "already
 * running", exit 0; other settings → nothing changed, the differences listed with the command that
 * applies them, exit 2; the running loop keeps its own settings. And errors name the flag the user typed.
 * The real CLI against the dev server (a worker on this file's task queue) and PostgreSQL.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { workflowIdForSite } from '../../core/common/names';
import { noCanaryWarning } from '../../client/on-call/canary-hint';
import { settingsQuery, stateQuery } from '../../loop/messages';
import { CLI, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
const site = `start${randomUUID().slice(0, 6)}.example.com`;
const dir = mkdtempSync(join(tmpdir(), 'th-start-'));
/** The site has no canary: every start says so on stderr (client/on-call/canary-hint.ts). */
const warning = (): string => `target-health: ${noCanaryWarning(site)}\n`;

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({
    TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
    DATABASE_URL: env('DATABASE_URL'),
    TEMPORAL_TASK_QUEUE: h.taskQueue,
  });
}, 120_000);

afterAll(async () => {
  await h.client.workflow
    .getHandle(workflowIdForSite(site))
    .terminate('test over')
    .catch(() => undefined);
  worker.shutdown();
  await running;
  await connection.close();
  await h.close();
});

test('a second start with the same or no settings: already running, exit 0', async () => {
  const first = await run(CLI, ['start', site, '--tick', '2s'], cliEnv);
  expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: warning() });
  expect(first.stdout).toContain(`started site-health:${site} (tick 2s)`);
  const handle = h.client.workflow.getHandle(workflowIdForSite(site));
  // The loop answers once its first workflow task ran.
  await eventually(async () => ((await handle.query(stateQuery)).tick >= 1 ? true : undefined), 'the first tick');

  for (const args of [
    ['start', site],
    ['start', site, '--tick', '2s'],
    ['start', site, '--tick', '2000'],
  ]) {
    const again = await run(CLI, args, cliEnv);
    expect({ args, code: again.code, stderr: again.stderr }).toEqual({ args, code: 0, stderr: warning() });
    expect(again.stdout).toContain(`site-health:${site} is already running`);
  }
});

test('other settings: nothing changed, the differences and the command that applies them, exit 2', async () => {
  const config = join(dir, 'settings.json');
  writeFileSync(config, JSON.stringify({ scoring: { smoothing: { halfLifeMs: 300_000 } } }));
  const r = await run(CLI, ['start', site, '--tick', '5s', '--config', config], cliEnv);
  expect(r.code).toBe(2);
  expect(r.stdout).toContain('is already running');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toEqual([
    warning().trimEnd(),
    `site-health:${site} runs with other settings than this start asks for; nothing was changed:`,
    '  scoring.smoothing.halfLifeMs: 10m (running) → 5m (asked)',
    '  tickIntervalMs: 2s (running) → 5s (asked)',
    `target-health: start: ${site} is already running with other settings; apply them with \`target-health ` +
      `configure ${site} --tick 5s --config ${config}\``,
  ]);
  // The running loop kept its own settings.
  const settings = await h.client.workflow.getHandle(workflowIdForSite(site)).query(settingsQuery);
  expect(settings.tickIntervalMs).toBe(2_000);
  expect(settings.scoring.smoothing.halfLifeMs).toBe(600_000);
});

test('errors name the flag the user typed', async () => {
  const tooShort = await run(CLI, ['start', site, '--tick', '500ms'], cliEnv);
  expect(tooShort.code).toBe(2);
  expect(tooShort.stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(
      /^target-health: --tick: expected a tick interval in milliseconds \(a whole number of at least 1000\)/,
    ),
  ]);
  const config = join(dir, 'fine.json');
  writeFileSync(config, JSON.stringify({ maxTicksPerRun: 10 }));
  const withFile = await run(CLI, ['start', site, '--config', config, '--tick', '500ms'], cliEnv);
  expect(withFile.code).toBe(2);
  expect(withFile.stderr.trimEnd().split('\n')).toEqual([
    expect.stringMatching(/^target-health: --tick: expected a tick interval/),
  ]);
});
