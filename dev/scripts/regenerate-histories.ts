/**
 * `npm run histories:regenerate -- <recording>` — records fresh event histories of the site loop for the
 * replay tests into test/histories/<recording>/ (default `v1`), replacing only that folder. Each folder
 * is one version of the workflow code: keep the folders of released versions, and record the code behind
 * a new `patched()` into a new folder (`v1-<patch>`), so the replay test covers both paths
 * (docs/control-loop.md, "Versioning the workflow").
 *
 * It starts its own services (an in-memory dev server and an embedded PostgreSQL in a temporary folder),
 * runs each scenario through the real worker, signal store and activities, and writes each run's history.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import pino from 'pino';
import { ingestNow, seedBaseline } from '../../test/kit/sites-traffic';
import { runMain } from '../../server/bootstrap/run-main';
import { workflowIdForSite } from '../../core/common/names';
import { PROJECT_ROOT } from '../../server/config/paths';
import { migrateUp } from '../../server/db/migrate';
import { createPool, type Pool } from '../../server/db/pool';
import { upsertSite } from '../../server/db/sites';
import { startEmbeddedPostgres } from '../../stack/embedded-postgres';
import { freePort } from '../../stack/free-port';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { startTemporalDevServer } from '../../stack/temporal-dev-server';
import { createWorker } from '../../worker/create-worker';
import { encodeHistory } from '../../test/kit/history-files';
import {
  SITE_HEALTH_WORKFLOW,
  type SiteHealthState,
  type SiteHealthWorkflow,
  configureUpdate,
  pauseSignal,
  pauseUpdate,
  resumeSignal,
  resumeUpdate,
  stateQuery,
  stopUpdate,
} from '../../loop/messages';
import type { SiteHealthInput } from '../../core/control/config';

export const HISTORIES_DIR = join(PROJECT_ROOT, 'test', 'histories');
const TASK_QUEUE = 'histories';
const BEFORE = 150_000;

const say = (m: string): void => void process.stderr.write(`[histories] ${m}\n`);

async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function waitFor(
  handle: WorkflowHandle,
  what: string,
  predicate: (s: SiteHealthState) => boolean,
): Promise<SiteHealthState> {
  return poll(what, async () => {
    const s = await handle.query(stateQuery);
    return predicate(s) ? s : undefined;
  });
}

interface Ctx {
  client: Client;
  pool: Pool;
  show(workflowId: string, runId?: string): Promise<string>;
}

function input(site: string, extra: Partial<SiteHealthInput> = {}): SiteHealthInput {
  return {
    site,
    tickIntervalMs: 1_000,
    window: { currentWindowMs: 10 * 60_000 },
    // Route confirmation, steps and the parser alert's persistence at the 1 s tick's pace (the product's are minutes).
    scoring: { smoothing: { halfLifeMs: 1_000 }, routes: { confirmAfterMs: 2_000 } },
    policy: {
      reminderIntervalMs: 2_000,
      steps: { degradeEveryMs: 1_000, restoreEveryMs: 1_000 },
      parserAlertAfterMs: 2_000,
    },
    timeouts: { activityMs: 5_000 },
    ...extra,
  };
}

async function newSite(ctx: Ctx, name: string, routes?: Array<{ pool: string }>): Promise<string> {
  const site = `${name}.example.com`;
  await upsertSite(ctx.pool, site, { owner: `owner@${site}`, parserOwner: `parser@${site}` });
  await seedBaseline(ctx.pool, site, routes ?? [undefined], routes ? 300 : 600);
  return site;
}

function start(ctx: Ctx, i: SiteHealthInput): Promise<WorkflowHandle> {
  return ctx.client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
    workflowId: workflowIdForSite(i.site),
    taskQueue: TASK_QUEUE,
    args: [i],
    staticSummary: `Health loop for ${i.site}`,
  });
}

/** Every run of a workflow id, oldest first, as [file suffix, history JSON]. */
async function runsOf(ctx: Ctx, workflowId: string): Promise<string[]> {
  const runs: Array<{ runId: string; start: number }> = [];
  for await (const w of ctx.client.workflow.list({ query: `WorkflowId="${workflowId}"` }))
    runs.push({ runId: w.runId, start: w.startTime.getTime() });
  runs.sort((a, b) => a.start - b.start);
  const out: string[] = [];
  for (const r of runs) out.push(await ctx.show(workflowId, r.runId));
  return out;
}

/** healthy → degrading → resisting → resume (signal, cautious) → restored → stop (update). */
async function escalation(ctx: Ctx): Promise<Record<string, string>> {
  const site = await newSite(ctx, 'escalation');
  await ingestNow(ctx.pool, site, { ok: 100 }, BEFORE);
  const handle = await start(ctx, input(site));
  await waitFor(handle, 'healthy', (s) => s.band === 'healthy');
  await ingestNow(ctx.pool, site, { hard: 60, ok: 40 }, BEFORE);
  await waitFor(handle, 'degrading', (s) => s.band === 'degrading' && (s.controls?.concurrencyLimit ?? 99) <= 9);
  await ingestNow(ctx.pool, site, { challenge: 100, soft: 100 }, BEFORE);
  const paused = await waitFor(handle, 'resisting', (s) => s.awaitingHuman !== null);
  await waitFor(handle, 'a reminder', (s) => s.tick >= paused.tick + 3);
  await handle.signal(resumeSignal, { who: 'alice@example.com', why: 'checked the terms', mode: 'cautious' });
  await waitFor(handle, 'resumed', (s) => s.awaitingHuman === null);
  // Only whole minutes after the decision are judged: the healthy traffic counts once such a minute has passed.
  await poll(
    'restored',
    async () => {
      const s = await handle.query(stateQuery);
      if (s.controls?.concurrencyLimit === 16 && s.controls.revisitMultiplier === 1) return s;
      await ingestNow(ctx.pool, site, { ok: 60 });
      return undefined;
    },
    240_000,
  );
  await handle.executeUpdate(stopUpdate, { args: [{ who: 'bob@example.com', why: 'done' }] });
  await handle.result();
  const [history] = await runsOf(ctx, handle.workflowId);
  // One delivery run, to replay the notification workflow too.
  const delivery = await poll('a delivery workflow', async () => {
    for await (const w of ctx.client.workflow.list({
      query: `WorkflowType="deliverNotification" AND ExecutionStatus="Completed"`,
    }))
      return w.workflowId;
    return undefined;
  });
  const deliveryHistory = await ctx.show(delivery);
  return { 'site-health-escalation': history!, 'deliver-notification': deliveryHistory };
}

/** A manual pause that waits across continue-as-new (3 ticks a run), then resume (explicit) and stop. */
async function continueAsNew(ctx: Ctx): Promise<Record<string, string>> {
  const site = await newSite(ctx, 'carried');
  await ingestNow(ctx.pool, site, { ok: 100 });
  const handle = await start(ctx, input(site, { maxTicksPerRun: 3 }));
  await waitFor(handle, 'healthy', (s) => s.band === 'healthy');
  await handle.executeUpdate(pauseUpdate, { args: [{ who: 'carol@example.com', why: 'legal hold' }] });
  await handle.signal(pauseSignal, { who: '', why: 'refused: no who' });
  const waiting = await waitFor(handle, 'waiting', (s) => s.awaitingHuman !== null);
  await waitFor(handle, 'two runs later', (s) => s.runs >= waiting.runs + 2);
  await handle.executeUpdate(resumeUpdate, {
    args: [{ who: 'dave@example.com', why: 'cleared', mode: 'explicit', concurrency: 4, revisitMultiplier: 3 }],
  });
  const resumed = await waitFor(handle, 'resumed', (s) => s.awaitingHuman === null);
  await waitFor(handle, 'a tick after', (s) => s.tick > resumed.tick);
  await handle.executeUpdate(stopUpdate, { args: [{ who: 'dave@example.com', why: 'done' }] });
  await handle.result();
  const runs = await runsOf(ctx, handle.workflowId);
  return Object.fromEntries(runs.map((h, i) => [`site-health-continue-as-new-run${i + 1}`, h]));
}

/** A dead proxy pool (route alert) and a parser break (parser alert); neither throttles. */
async function routeAndParser(ctx: Ctx): Promise<Record<string, string>> {
  const pools = [{ pool: 'pool-a' }, { pool: 'pool-b' }, { pool: 'pool-c' }];
  const site = await newSite(ctx, 'routes', pools);
  for (const route of pools) await ingestNow(ctx.pool, site, { ok: 100, route });
  const handle = await start(ctx, input(site));
  await waitFor(handle, 'healthy', (s) => s.band === 'healthy');
  await ingestNow(ctx.pool, site, { hard: 80, route: { pool: 'pool-c' } });
  await waitFor(handle, 'route alert', (s) => s.alerts.route);
  await ingestNow(ctx.pool, site, { missing: 300, route: { pool: 'pool-a' } });
  await waitFor(handle, 'parser alert', (s) => s.alerts.parser);
  await handle.executeUpdate(stopUpdate, { args: [{ who: 'erin@example.com', why: 'done' }] });
  await handle.result();
  const [history] = await runsOf(ctx, handle.workflowId);
  return { 'site-health-route-parser': history! };
}

/**
 * Live settings: an unknown signal and a bad decision refused, a `configure`
 * update (tick, policy, owner) carried through continue-as-new, a pause that drops the refusals, stop.
 */
async function liveSettings(ctx: Ctx): Promise<Record<string, string>> {
  const site = await newSite(ctx, 'configure');
  await ingestNow(ctx.pool, site, { ok: 100 });
  const handle = await start(ctx, input(site, { maxTicksPerRun: 4 }));
  await waitFor(handle, 'healthy', (s) => s.band === 'healthy');
  await handle.signal('resmue', { who: 'frank@example.com', why: 'typo' });
  await handle.signal(pauseSignal, { who: '', why: 'refused: no who' });
  await waitFor(handle, 'two refusals', (s) => s.rejected.length >= 2);
  const changed = await handle.executeUpdate(configureUpdate, {
    args: [
      {
        who: 'frank@example.com',
        why: 'slower ticks',
        settings: { tickIntervalMs: 2_000, policy: { concurrency: { nominal: 12 } } },
        owner: `new-owner@${site}`,
      },
    ],
  });
  const before = await handle.query(stateQuery);
  await waitFor(
    handle,
    'a continue-as-new on the new settings',
    (s) => s.runs > before.runs && s.tick >= before.tick + 2 && s.tickIntervalMs === changed.tickIntervalMs,
  );
  await handle.executeUpdate(pauseUpdate, { args: [{ who: 'frank@example.com', why: 'hold' }] });
  await waitFor(handle, 'paused, refusals dropped', (s) => s.awaitingHuman !== null && s.rejected.length === 0);
  await handle.executeUpdate(stopUpdate, { args: [{ who: 'frank@example.com', why: 'done' }] });
  await handle.result();
  const runs = await runsOf(ctx, handle.workflowId);
  return Object.fromEntries(runs.map((h, i) => [`site-health-live-settings-run${i + 1}`, h]));
}

/**
 * The local assessment's fallback: the assessments table held (as a lock) for longer than the local
 * assessment's budget, so the tick's local attempts time out and it is assessed by the regular activity
 * once the table is free; two more ticks, stop.
 */
async function assessmentFallback(ctx: Ctx): Promise<Record<string, string>> {
  const site = await newSite(ctx, 'fallback');
  await ingestNow(ctx.pool, site, { ok: 100 });
  const handle = await start(ctx, input(site, { timeouts: { activityMs: 2_000 } }));
  await waitFor(handle, 'healthy', (s) => s.band === 'healthy');
  const locker = await ctx.pool.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE assessments IN EXCLUSIVE MODE');
    await poll('the tick retried as a regular activity', async () => {
      const d = await handle.describe();
      return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'assessSite') ? true : undefined;
    });
  } finally {
    await locker.query('COMMIT');
    locker.release();
  }
  const after = await handle.query(stateQuery);
  await waitFor(handle, 'two ticks after', (s) => s.tick >= after.tick + 2);
  await handle.executeUpdate(stopUpdate, { args: [{ who: 'gina@example.com', why: 'done' }] });
  await handle.result();
  const [history] = await runsOf(ctx, handle.workflowId);
  return { 'site-health-assessment-fallback': history! };
}

const SCENARIOS = { escalation, continueAsNew, routeAndParser, liveSettings, assessmentFallback };

runMain('regenerate-histories', async () => {
  const recording = process.argv[2] ?? 'v1';
  if (!/^[a-z0-9][a-z0-9-]*$/.test(recording))
    throw new Error(`recording: "${recording}" must be a folder name like v1 or v1-tick-jitter (a-z, 0-9, -)`);
  const dir = mkdtempSync(join(tmpdir(), 'th-histories-'));
  chmodSync(dir, 0o755);
  const cli = await ensureTemporalCli({ info: say, warn: say });
  const [server, pg] = await Promise.all([
    startTemporalDevServer({ cli, port: await freePort(), namespace: 'default', logFile: join(dir, 'temporal.log') }),
    startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), port: await freePort(), persistent: false }),
  ]);
  const pool = createPool(pg.databaseUrl, 8);
  try {
    await migrateUp(pg.databaseUrl);
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const connection = await Connection.connect({ address: server.address });
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default' });
    const worker = await createWorker({
      connection: native,
      namespace: 'default',
      taskQueue: TASK_QUEUE,
      pool,
      logger: pino({ level: 'warn' }),
    });
    const show = async (workflowId: string, runId?: string): Promise<string> =>
      encodeHistory(await client.workflow.getHandle(workflowId, runId).fetchHistory());
    const histories: Record<string, string> = {};
    await worker.runUntil(async () => {
      for (const [name, scenario] of Object.entries(SCENARIOS)) {
        say(`scenario ${name}…`);
        Object.assign(histories, await scenario({ client, pool, show }));
      }
    });
    const target = join(HISTORIES_DIR, recording);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    for (const [name, json] of Object.entries(histories)) {
      writeFileSync(join(target, `${name}.json`), `${json}\n`);
      say(`wrote test/histories/${recording}/${name}.json (${Math.round(json.length / 1024)} KB)`);
    }
    await native.close();
    await connection.close();
  } finally {
    await pool.end();
    await Promise.all([server.stop(), pg.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
});
