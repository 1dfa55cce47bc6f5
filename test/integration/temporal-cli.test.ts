/**
 * Temporal as on-call meets it, through the real CLI (client/bin/target-health.js) and the dev server:
 * `target-health temporal …` runs the provisioned Temporal CLI with the project's connection settings
 * (typed flags win, exit codes come back, a bad setting or a missing binary is one line); and the list
 * queries docs/on-call.md shows — checked to be exactly loop/list-queries.ts — list only site loops or
 * only notification deliveries, with a real site paused by the loop (its deliveries started by the loop)
 * and a delivery that gave up.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { workflowIdForSite } from '../../core/common/names';
import { DELIVER_NOTIFICATION_WORKFLOW, SITE_HEALTH_WORKFLOW } from '../../loop/messages';
import { freePort } from '../../stack/free-port';
import { listQueries, listQueryCommands } from '../../loop/list-queries';
import { ingestNow, loopInput, prepareSite, startHealthySite, waitForState } from '../kit/control-loop';
import { CLI, ROOT, cleanEnv, run } from '../kit/processes';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let cliEnv: NodeJS.ProcessEnv;
let site: string;
const gaveUp = `notify:missing-${randomUUID()}`;

/** What `temporal workflow list --output json` prints per execution (the fields this test reads). */
const listed = z.array(
  z.object({ execution: z.object({ workflowId: z.string() }), type: z.object({ name: z.string() }) }),
);
type Listed = z.infer<typeof listed>;

async function list(query: string): Promise<Listed> {
  const r = await run(CLI, ['temporal', 'workflow', 'list', '--query', query, '--output', 'json'], cliEnv);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return listed.parse(JSON.parse(r.stdout));
}

beforeAll(async () => {
  h = await openHarness();
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  cliEnv = cleanEnv({
    TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS'),
    TEMPORAL_NAMESPACE: 'default',
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
  });

  // A site the loop pauses: degrading, then resisting, each notifying its owner through a delivery workflow.
  site = await prepareSite(h.pool, 'tcli');
  await ingestNow(h.pool, site, { ok: 100 });
  const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
  await ingestNow(h.pool, site, { hard: 60, ok: 40 });
  await waitForState(handle, 'degrading', (s) => s.band === 'degrading');
  await ingestNow(h.pool, site, { challenge: 100, soft: 100 });
  await waitForState(handle, 'resisting and waiting', (s) => s.band === 'resisting' && s.awaitingHuman !== null);

  // A delivery that gives up: its notification is not in the outbox (not retried).
  const failing = await h.client.workflow.start(DELIVER_NOTIFICATION_WORKFLOW, {
    workflowId: gaveUp,
    taskQueue: h.taskQueue,
    args: [{ notificationKey: gaveUp.slice('notify:'.length) }],
  });
  await expect(failing.result()).rejects.toThrow();
}, 240_000);

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

test('docs/on-call.md shows exactly the list queries of loop/list-queries.ts', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'on-call.md'), 'utf8');
  const block = /<!-- list-queries[^>]*-->\n```sh\n([\s\S]*?)\n```\n<!-- \/list-queries -->/.exec(doc);
  expect(block).not.toBeNull();
  expect(block![1]!.split('\n')).toEqual(listQueryCommands());
});

test('each documented query lists only site loops or only deliveries, and finds ours', async () => {
  const ours = workflowIdForSite(site);
  const queries = listQueries(site);
  const byShows = Object.fromEntries(queries.map((q) => [q.shows, q]));
  const results = await eventually(
    async () => {
      const out: Record<string, Listed> = {};
      for (const q of queries) out[q.shows] = await list(q.query);
      const ids = (shows: string): string[] => out[shows]!.map((e) => e.execution.workflowId);
      const settled =
        ids('every site loop that runs').includes(ours) &&
        ids('the sites waiting for a person').includes(ours) &&
        ids('the deliveries that gave up').includes(gaveUp) &&
        ids("one site's deliveries").length >= 2;
      return settled ? out : undefined;
    },
    'every list showing this run',
    30_000,
  );

  for (const [shows, executions] of Object.entries(results)) {
    const type = byShows[shows]!.lists === 'sites' ? SITE_HEALTH_WORKFLOW : DELIVER_NOTIFICATION_WORKFLOW;
    expect({ shows, types: [...new Set(executions.map((e) => e.type.name))] }).toEqual({ shows, types: [type] });
  }
  const ids = (shows: string): string[] => results[shows]!.map((e) => e.execution.workflowId);
  // The site's own deliveries (degrading, resisting) are among all deliveries, not among the sites.
  const siteDeliveries = ids("one site's deliveries");
  expect(siteDeliveries.every((id) => id.startsWith('notify:'))).toBe(true);
  expect(siteDeliveries).not.toContain(gaveUp);
  expect(ids('every notification delivery')).toEqual(expect.arrayContaining([...siteDeliveries, gaveUp]));
  for (const id of siteDeliveries) expect(ids('every site loop that runs')).not.toContain(id);
}, 90_000);

test('pass-through: output and exit code come back; typed flags win over the settings', async () => {
  const ours = workflowIdForSite(site);
  const described = await run(
    CLI,
    ['temporal', 'workflow', 'describe', '--workflow-id', ours, '--output', 'json'],
    cliEnv,
  );
  expect(described.code).toBe(0);
  expect(described.stdout).toContain(ours);

  // The CLI's own failure, its exit code passed back.
  const missing = await run(
    CLI,
    ['temporal', 'workflow', 'describe', '--workflow-id', `site-health:none-${randomUUID()}`],
    cliEnv,
  );
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/not found/i);

  // Settings point elsewhere (a closed port, an unknown namespace): the typed flags decide.
  const closed = `127.0.0.1:${await freePort()}`;
  const elsewhere = { ...cliEnv, TEMPORAL_ADDRESS: closed, TEMPORAL_NAMESPACE: `nowhere-${randomUUID().slice(0, 8)}` };
  const failing = await run(
    CLI,
    ['temporal', 'workflow', 'describe', '--workflow-id', ours, '--command-timeout', '5s'],
    elsewhere,
  );
  expect(failing.code).not.toBe(0);
  const flagged = await run(
    CLI,
    [
      'temporal',
      'workflow',
      'describe',
      '--workflow-id',
      ours,
      '--address',
      env('TEMPORAL_ADDRESS'),
      '--namespace',
      'default',
    ],
    elsewhere,
  );
  expect({ code: flagged.code, stderr: flagged.stderr }).toEqual({ code: 0, stderr: '' });
  expect(flagged.stdout).toContain(ours);

  // Help is the Temporal CLI's own.
  const help = await run(CLI, ['temporal', 'workflow', 'list', '--help'], cliEnv);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('temporal workflow list [flags]');
}, 60_000);

test('a bad setting, or no Temporal CLI to be found or built: one line, exit 2', async () => {
  const bad = await run(CLI, ['temporal', 'workflow', 'list'], { ...cliEnv, TEMPORAL_ADDRESS: 'localhost' });
  expect({ code: bad.code, stdout: bad.stdout, stderr: bad.stderr }).toEqual({
    code: 2,
    stdout: '',
    stderr:
      'target-health: TEMPORAL_ADDRESS: must be host:port, e.g. localhost:7233 or my-ns.tmprl.cloud:7233 (got ' +
      '"localhost")\n',
  });

  // No temporal on PATH, an empty cache, no Go.
  const cache = mkdtempSync(join(tmpdir(), 'th-no-temporal-'));
  try {
    const none = await run(
      CLI,
      ['temporal', 'workflow', 'list'],
      cleanEnv({ PATH: '/nonexistent', XDG_CACHE_HOME: cache, TEMPORAL_ADDRESS: env('TEMPORAL_ADDRESS') }),
    );
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 2, stdout: '' });
    expect(none.stderr.trimEnd().split('\n')).toEqual([
      `target-health: temporal: no Temporal CLI on PATH or in ` +
        `${join(cache, 'target-health', 'temporal-v1.5.1')}, and no Go to build one; install the Temporal CLI ` +
        `(https://docs.temporal.io/cli/setup-cli) and put it on PATH, or set TEMPORAL_CLI_PATH to it`,
    ]);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
