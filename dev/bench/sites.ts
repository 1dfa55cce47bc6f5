/**
 * `npm run bench:sites` — how many site loops one worker and the Temporal dev server sustain on this
 * machine at a given tick interval. For each scale it runs, on a fresh dev server (SQLite file, as
 * `npm start` uses) and a fresh worker process (production wiring: real activities, PostgreSQL, signal
 * store):
 *   1. the baseline: the same number of empty timer-only loops (what Temporal itself costs);
 *   2. the site loops: real `siteHealth` workflows over scored sites (most healthy, some degrading and
 *      some resisting, so actions, notifications and paused sites are in the mix).
 * Tick lag is read from the event histories (server timestamps): due → workflow task started (`wake`)
 * and due → assessment activity started (`tick`). CPU time of the worker, the dev server and
 * PostgreSQL is read from /proc over the measured window, per tick.
 *
 * Options (flags or environment): --sites 1000[,2000…] (BENCH_SITES), --tick 60 (s, BENCH_TICK_S),
 * --measure 120 (s, BENCH_MEASURE_S), --server-db file|memory (BENCH_SERVER_DB: the dev server's SQLite on
 * disk, as `npm start` runs it, or in memory — to show what the disk costs), --server dev|cluster|dev,cluster
 * (BENCH_SERVER: the dev server, the cluster stack's Temporal server on its own PostgreSQL — stack/cluster —
 * or both in the same run, each scale on each; the server's CPU then includes its PostgreSQL's), --cache N
 * (BENCH_CACHE: the worker's TARGET_HEALTH_WORKER_CACHED_WORKFLOWS), --sticky MS (BENCH_STICKY_MS: its
 * TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createWriteStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { upsertSite } from '../../server/db/sites';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { freePort } from '../../stack/free-port';
import { startTemporalDevServer } from '../../stack/temporal-dev-server';
import { startClusterStack } from '../../stack/cluster/cluster-stack';
import pino from 'pino';
import type { SiteHealthInput } from '../../core/control/config';
import { SITE_HEALTH_WORKFLOW, type SiteHealthWorkflow } from '../../loop/messages';
import { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';
import { phaseMs } from '../../core/control/schedule';
import { firstTaskWaitMs, siteTickLags, slotsDue, tickLags, type TickLag } from './history-lag';
import { cpuMs, rssMb, treeCpuMs } from './proc-stats';
import { eventsOf, ingest } from '../../test/kit/sites-traffic';
import { fmt, heading, line, percentile, startBenchDb, type BenchDb } from './support';
import { bundlerOptions } from '../../worker/workflow-bundle';

const TimeoutType = temporal.api.enums.v1.TimeoutType;
const DAY = 86_400_000;
const EventType = temporal.api.enums.v1.EventType;

function option(flag: string, envName: string, fallback: string): string {
  const i = process.argv.indexOf(flag);
  if (i >= 0 && process.argv[i + 1] !== undefined) return process.argv[i + 1]!;
  return process.env[envName] ?? fallback;
}

const SITES = option('--sites', 'BENCH_SITES', '1000')
  .split(',')
  .map((s) => Number(s.trim()));
const TICK_MS = Number(option('--tick', 'BENCH_TICK_S', '60')) * 1000;
const MEASURE_MS = Number(option('--measure', 'BENCH_MEASURE_S', '120')) * 1000;
/** `file`: SQLite on disk, as `npm start` runs the dev server; `memory`: no disk, to show what the disk costs. */
const SERVER_DB = option('--server-db', 'BENCH_SERVER_DB', 'file');
/** Worker cache size (TARGET_HEALTH_WORKER_CACHED_WORKFLOWS), e.g. `--cache 250`; default: the worker's own. */
const CACHE = option('--cache', 'BENCH_CACHE', '');
/**
 * Sticky queue schedule-to-start timeout (TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS), e.g. `--sticky 30000`; default: the
 * worker's own.
 */
const STICKY = option('--sticky', 'BENCH_STICKY_MS', '');
const SERVERS = option('--server', 'BENCH_SERVER', 'dev')
  .split(',')
  .map((x) => x.trim());
for (const name of SERVERS)
  if (name !== 'dev' && name !== 'cluster')
    throw new Error(`--server: "${name}" is not a server; use dev, cluster or dev,cluster`);
type ServerKind = 'dev' | 'cluster';
const TARGET = { sites: 1000, tickMs: 60_000, p95Ms: 2000 };
/** Share of sites whose current traffic degrades / resists (the rest is healthy). */
const MIX = { degrading: 0.1, resisting: 0.05 };
const TASK_QUEUE = 'bench-sites';
const GRACE_MS = 10_000;
const WARMUP_MS = 2 * TICK_MS + 5_000;

const say = (m: string): void => void process.stderr.write(`[bench:sites] ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i]!, i);
    }),
  );
}

/** Scored sites: a 240-request baseline over days −13..−2 and 60 requests now, per the mix. */
async function seedSites(db: BenchDb, sites: readonly string[]): Promise<void> {
  const now = Date.now();
  let batch: Record<string, unknown>[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length > 0) await ingest(db.pool, batch);
    batch = [];
  };
  for (const [i, site] of sites.entries()) {
    await upsertSite(db.pool, site, { owner: `owner@${site}` });
    batch.push(...eventsOf(site, { ok: 240 }, (k) => now - 2 * DAY - Math.floor(((k + 0.5) / 240) * 11 * DAY)));
    const kind =
      i % 100 < MIX.resisting * 100
        ? 'resisting'
        : i % 100 < (MIX.resisting + MIX.degrading) * 100
          ? 'degrading'
          : 'healthy';
    const mix =
      kind === 'healthy'
        ? { ok: 60 }
        : kind === 'degrading'
          ? { ok: 42, hard: 18 }
          : { ok: 12, hard: 16, challenge: 16, soft: 16 };
    batch.push(...eventsOf(site, mix, (k) => now - 60_000 - k * 100));
    if (batch.length >= 20_000) await flush();
  }
  await flush();
}

interface Phase {
  name: string;
  workflows: number;
  ticksExpected: number;
  /** Ticks due in the window that had not started when the worker was stopped (grace included). */
  late: number;
  /** Per workflow: its first workflow task, scheduled → started (the start-up burst). */
  firstTaskWaits: number[];
  /** Site loops, all started at once: start → first tick's assessment (the start-up storm, phases spreading it). */
  firstTickDelays: number[];
  /** Site loops: the most first ticks that woke within one second. */
  firstTicksPeakPerSecond: number;
  /** Over the whole run, all workflows: workflow tasks failed / timed out, activities timed out. */
  taskFailures: number;
  taskTimeouts: number;
  /**
   * Of taskTimeouts: waited longer than the sticky timeout for the worker that cached the workflow (then replayed by
   * whichever worker takes it).
   */
  stickyTimeouts: number;
  activityTimeouts: number;
  lags: TickLag[];
  windowMs: number;
  workerCpuMs: number;
  serverCpuMs: number;
  /** Of serverCpuMs: the cluster's own PostgreSQL (Temporal's persistence and visibility); 0 for the dev server. */
  serverStoreCpuMs: number;
  pgCpuMs: number;
  rssAvgMb: number;
  rssMaxMb: number;
}

async function startWorker(env: NodeJS.ProcessEnv, logFile: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(__dirname, 'sites-worker.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.includes('bench worker polling')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`bench worker exited (${code}): ${out}`)));
  });
  return child;
}

interface BenchServer {
  address: string;
  /** CPU of the server's processes: the dev server; the cluster's Temporal server and its PostgreSQL. */
  cpuMs(): number;
  /**
   * Of cpuMs: the server's persistence process (the cluster's PostgreSQL; 0 for the dev server, whose SQLite is
   * in-process).
   */
  storeCpuMs(): number;
  stop(): Promise<void>;
}

/** A fresh Temporal server for one phase. */
async function startServer(kind: ServerKind, name: string, dir: string): Promise<BenchServer> {
  if (kind === 'dev') {
    const cli = await ensureTemporalCli({ info: say, warn: say });
    const port = await freePort();
    const server = await startTemporalDevServer({
      cli,
      port,
      namespace: 'default',
      logFile: join(dir, `temporal-${name}.log`),
      ...(SERVER_DB === 'file' ? { dbFile: join(dir, `temporal-${name}.sqlite`) } : {}),
    });
    return {
      address: server.address,
      cpuMs: () => treeCpuMs(server.pid!),
      storeCpuMs: () => 0,
      stop: async () => {
        await server.stop();
        // Keep the logs, not the (large) SQLite files.
        rmSync(join(dir, `temporal-${name}.sqlite`), { force: true });
      },
    };
  }
  const clusterDir = join(dir, `cluster-${name}`);
  const stack = await startClusterStack({
    dataDir: clusterDir,
    workers: 0,
    ports: 'free',
    uiPort: null,
    postgresPort: await freePort(),
    persistent: false,
    logger: pino({ level: 'warn' }),
  });
  const pgPid = Number(readFileSync(join(clusterDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    address: stack.address,
    cpuMs: () => treeCpuMs(stack.server.pid!) + treeCpuMs(pgPid),
    storeCpuMs: () => treeCpuMs(pgPid),
    stop: () => stack.stop(),
  };
}

async function runPhase(opts: {
  name: string;
  server: ServerKind;
  db: BenchDb;
  dir: string;
  bundlePath: string;
  pgPid: number;
  count: number;
  kind: 'timer' | 'sites';
  sites: readonly string[];
}): Promise<Phase> {
  const server = await startServer(opts.server, opts.name, opts.dir);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: 'default' });
  const worker = await startWorker(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      DATABASE_URL: opts.db.databaseUrl,
      TH_BENCH_BUNDLE: opts.bundlePath,
      LOG_FORMAT: 'json',
      ...(CACHE === '' ? {} : { TARGET_HEALTH_WORKER_CACHED_WORKFLOWS: CACHE }),
      ...(STICKY === '' ? {} : { TARGET_HEALTH_WORKER_STICKY_TIMEOUT_MS: STICKY }),
    },
    join(opts.dir, `worker-${opts.name}.log`),
  );
  try {
    // The empty loops are spread by random start delays (an evenly spread reference load); the site loops
    // all start at once, as a fleet's `start` does — their phases (core/control/schedule.ts) spread the ticks.
    const spread =
      opts.kind === 'timer'
        ? `first ticks spread over ${TICK_MS / 1000} s by start delays`
        : 'all at once (the site phases spread them)';
    say(`${opts.name}: starting ${opts.count} workflows, ${spread}`);
    const ids = Array.from({ length: opts.count }, (_, i) =>
      opts.kind === 'timer' ? `timer-only-${i}` : `site-health:${opts.sites[i]}`,
    );
    await pool(ids, 32, async (workflowId, i) => {
      if (opts.kind === 'timer') {
        await client.workflow.start('timerOnlyLoop', {
          workflowId,
          taskQueue: TASK_QUEUE,
          args: [{ tickIntervalMs: TICK_MS }],
          startDelay: randomInt(0, TICK_MS),
        });
      } else {
        const input: SiteHealthInput = {
          site: opts.sites[i]!,
          tickIntervalMs: TICK_MS,
          scoring: { learning: { minBaselineRequests: 200 } },
        };
        await client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
          workflowId,
          taskQueue: TASK_QUEUE,
          args: [input],
        });
      }
    });
    // Two intervals: every loop has had its first tick and the start-up burst (all N loops created
    // within one interval) is over before the window opens; it is reported on its own.
    await sleep(WARMUP_MS);
    const w0 = Date.now();
    const cpu0 = {
      worker: cpuMs(worker.pid!),
      server: server.cpuMs(),
      store: server.storeCpuMs(),
      pg: treeCpuMs(opts.pgPid),
    };
    const rss: number[] = [];
    while (Date.now() - w0 < MEASURE_MS) {
      rss.push(rssMb(worker.pid!));
      await sleep(1_000);
    }
    const w1 = Date.now();
    const cpu1 = {
      worker: cpuMs(worker.pid!),
      server: server.cpuMs(),
      store: server.storeCpuMs(),
      pg: treeCpuMs(opts.pgPid),
    };
    await sleep(GRACE_MS);
    const stoppedAt = Date.now();
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));

    say(`${opts.name}: reading ${ids.length} histories`);
    const lags: TickLag[] = [];
    const firstTaskWaits: number[] = [];
    const firstTickDelays: number[] = [];
    const firstTickSeconds = new Map<number, number>();
    let taskFailures = 0;
    let taskTimeouts = 0;
    let stickyTimeouts = 0;
    let activityTimeouts = 0;
    let skipped = 0;
    await pool(ids, 16, async (workflowId) => {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const site = workflowId.slice('site-health:'.length);
      const ticks = opts.kind === 'sites' ? siteTickLags(history, phaseMs(site, TICK_MS)) : tickLags(history, TICK_MS);
      const first = ticks[0];
      if (opts.kind === 'sites' && first !== undefined && first.tickLagMs !== null) {
        const startedAt = tsToMs(history.events?.[0]?.eventTime);
        const at = first.dueAt + first.tickLagMs;
        firstTickDelays.push(at - startedAt);
        const second = Math.floor(at / 1000);
        firstTickSeconds.set(second, (firstTickSeconds.get(second) ?? 0) + 1);
      } else if (opts.kind === 'sites') {
        // No first tick by the time the worker stopped: it counts with its wait so far (a lower bound).
        firstTickDelays.push(stoppedAt - tsToMs(history.events?.[0]?.eventTime));
      }
      const all = ticks.filter((l) => l.dueAt >= w0 && l.dueAt < w1);
      lags.push(...all);
      // A site loop behind by a whole interval skips to its latest slot: the slots it skipped never ran.
      if (opts.kind === 'sites' && ticks.length > 0)
        skipped += Math.max(0, slotsDue(ticks[0]!.dueAt, TICK_MS, w0, w1) - all.length);
      firstTaskWaits.push(firstTaskWaitMs(history, stoppedAt));
      for (const e of history.events ?? []) {
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) taskFailures += 1;
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) {
          taskTimeouts += 1;
          if (e.workflowTaskTimedOutEventAttributes?.timeoutType === TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START)
            stickyTimeouts += 1;
        }
        if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT) activityTimeouts += 1;
      }
    });
    // Ticks due in the window that had not woken when the worker stopped count with their lag so far.
    let late = 0;
    for (const l of lags) {
      if (Number.isNaN(l.wakeLagMs)) {
        l.wakeLagMs = stoppedAt - l.dueAt;
        late += 1;
      }
      if (opts.kind === 'sites' && l.tickLagMs === null) l.tickLagMs = stoppedAt - l.dueAt;
    }
    const expected = Math.round((opts.count * (w1 - w0)) / TICK_MS);
    late += skipped;
    return {
      name: opts.name,
      workflows: opts.count,
      ticksExpected: expected,
      late,
      firstTaskWaits,
      firstTickDelays,
      firstTicksPeakPerSecond: Math.max(0, ...firstTickSeconds.values()),
      taskFailures,
      taskTimeouts,
      stickyTimeouts,
      activityTimeouts,
      lags,
      windowMs: w1 - w0,
      workerCpuMs: cpu1.worker - cpu0.worker,
      serverCpuMs: cpu1.server - cpu0.server,
      serverStoreCpuMs: cpu1.store - cpu0.store,
      pgCpuMs: cpu1.pg - cpu0.pg,
      rssAvgMb: rss.reduce((a, b) => a + b, 0) / Math.max(1, rss.length),
      rssMaxMb: Math.max(...rss),
    };
  } finally {
    if (worker.exitCode === null) worker.kill('SIGKILL');
    await connection.close();
    await server.stop();
  }
}

function report(server: ServerKind, base: Phase, sites: Phase): { met: boolean } {
  const serverName = server === 'dev' ? 'dev server' : 'Temporal server + its PostgreSQL';
  const wake = (p: Phase) => p.lags.map((l) => l.wakeLagMs);
  const tick = (p: Phase) => p.lags.map((l) => l.tickLagMs).filter((x): x is number => x !== null);
  const perTick = (p: Phase, cpu: number) => cpu / Math.max(1, p.lags.length);
  const pct = (p: Phase, cpu: number) => `${fmt((cpu / p.windowMs) * 100)}% of a core`;
  heading(
    `${server === 'dev' ? 'Dev server' : 'Cluster stack'}: ${sites.workflows} sites, tick every ` +
      `${TICK_MS / 1000} s, measured ${fmt(sites.windowMs / 1000)} s after a ${WARMUP_MS / 1000} s warm-up`,
  );
  for (const p of [base, sites]) {
    const label = p === base ? 'baseline: empty timer-only loops' : 'site loops (siteHealth)';
    line(
      `${label}: ticks due in the window (≈ N × window / tick), not started`,
      `${fmt(p.lags.length)} (≈ ${fmt(p.ticksExpected)}), ${fmt(p.lags.length / (p.windowMs / 1000), 1)}/s, ` +
        `${fmt(p.late)} not started`,
    );
    line(
      `${label}: wake lag p50 / p95 / max (due → workflow task)`,
      `${fmt(percentile(wake(p), 0.5))} / ${fmt(percentile(wake(p), 0.95))} / ${fmt(Math.max(...wake(p)))} ms`,
    );
    if (p === sites) {
      line(
        `${label}: TICK LAG p50 / p95 / max (due → assessment starts)`,
        `${fmt(percentile(tick(p), 0.5))} / ${fmt(percentile(tick(p), 0.95))} / ${fmt(Math.max(...tick(p)))} ms`,
      );
      const assess = p.lags.map((l) => l.assessMs).filter((x): x is number => x !== null);
      const cycle = p.lags.map((l) => l.cycleMs).filter((x): x is number => x !== null);
      line(
        `${label}: assessment activity p50 / p95 (scheduled → completed)`,
        `${fmt(percentile(assess, 0.5))} / ${fmt(percentile(assess, 0.95))} ms`,
      );
      if (cycle.length > 0)
        line(
          `${label}: whole tick p50 / p95 (timer fired → next timer)`,
          `${fmt(percentile(cycle, 0.5))} / ${fmt(percentile(cycle, 0.95))} ms`,
        );
    }
    line(
      `${label}: start-up: first workflow task waited p50 / p95 / max`,
      `${fmt(percentile(p.firstTaskWaits, 0.5))} / ${fmt(percentile(p.firstTaskWaits, 0.95))} / ` +
        `${fmt(Math.max(...p.firstTaskWaits))} ms`,
    );
    if (p === sites && p.firstTickDelays.length > 0) {
      line(
        `${label}: start-up storm: all started at once → first tick p50 / p95 / max`,
        `${fmt(percentile(p.firstTickDelays, 0.5))} / ${fmt(percentile(p.firstTickDelays, 0.95))} / ` +
          `${fmt(Math.max(...p.firstTickDelays))} ms`,
      );
      line(
        `${label}: start-up storm: most first ticks in one second (steady state: ` +
          `${fmt(p.workflows / (TICK_MS / 1000), 1)}/s)`,
        fmt(p.firstTicksPeakPerSecond),
      );
    }
    line(
      `${label}: workflow tasks failed / timed out (of which sticky-queue waits), activities timed out`,
      `${fmt(p.taskFailures)} / ${fmt(p.taskTimeouts)} (${fmt(p.stickyTimeouts)}) / ${fmt(p.activityTimeouts)}`,
    );
    line(`${label}: worker CPU, RSS avg / max`, `${pct(p, p.workerCpuMs)}, ${fmt(p.rssAvgMb)} / ${fmt(p.rssMaxMb)} MB`);
    line(`${label}: ${serverName} CPU / product's PostgreSQL CPU`, `${pct(p, p.serverCpuMs)} / ${pct(p, p.pgCpuMs)}`);
    line(
      `${label}: CPU per tick: worker / ${serverName} / product's PostgreSQL`,
      `${fmt(perTick(p, p.workerCpuMs), 1)} / ${fmt(perTick(p, p.serverCpuMs), 1)} / ` +
        `${fmt(perTick(p, p.pgCpuMs), 1)} ms`,
    );
    if (server === 'cluster')
      line(
        `${label}: of the server's CPU per tick: Temporal server / its PostgreSQL`,
        `${fmt(perTick(p, p.serverCpuMs - p.serverStoreCpuMs), 1)} / ${fmt(perTick(p, p.serverStoreCpuMs), 1)} ms`,
      );
  }
  const ratio = (a: number, b: number) => (b > 0 ? `×${fmt(a / b, 1)}` : 'n/a');
  line('ratio site loops / baseline: wake lag p95', ratio(percentile(wake(sites), 0.95), percentile(wake(base), 0.95)));
  line(
    `ratio site loops / baseline: ${serverName} CPU per tick`,
    ratio(perTick(sites, sites.serverCpuMs), perTick(base, base.serverCpuMs)),
  );
  line(
    'ratio site loops / baseline: worker CPU per tick',
    ratio(perTick(sites, sites.workerCpuMs), perTick(base, base.workerCpuMs)),
  );
  const p95 = percentile(tick(sites), 0.95);
  // Sustained: every tick due in the window started (none still waiting 10 s after it).
  const sustained = sites.late === 0;
  const met = sustained && p95 < TARGET.p95Ms;
  const verdict = met
    ? 'target met'
    : sustained
      ? 'target NOT met (every due tick ran, late)'
      : 'NOT sustained (due ticks never ran)';
  line(
    `verdict (${server}) at ${sites.workflows} sites / ${TICK_MS / 1000} s`,
    `${verdict}: tick lag p95 ${fmt(p95)} ms ${p95 < TARGET.p95Ms ? '<' : '≥'} ${TARGET.p95Ms} ms`,
  );
  return { met };
}

async function main(): Promise<void> {
  const db = await startBenchDb();
  const pgPid = Number(readFileSync(join(db.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  try {
    const bundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('./sites-workflows'),
      ...bundlerOptions(),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn: say, error: say },
    });
    const bundlePath = join(db.dir, 'bench-bundle.js');
    say(`logs in ${db.dir}`);
    writeFileSync(bundlePath, bundle.code);
    const serverLabel = (k: ServerKind): string =>
      k === 'dev'
        ? `the Temporal dev server (SQLite ${SERVER_DB === 'file' ? 'file' : 'in memory'})`
        : 'the cluster stack (Temporal server on PostgreSQL)';
    heading(
      `Site loops: one worker (cache: ${CACHE === '' ? 'the worker default' : `${CACHE} workflows`}, sticky ` +
        `timeout: ${STICKY === '' ? 'the worker default' : `${STICKY} ms`}) + ` +
        `${SERVERS.map((k) => serverLabel(k as ServerKind)).join(', then ')}, ${cpus().length} cores`,
    );
    const outcomes: Array<{ server: ServerKind; sites: number; met: boolean }> = [];
    for (const count of SITES) {
      for (const server of SERVERS as ServerKind[]) {
        // Sites of their own per server: the second server's loops start from no stored state of the first's.
        const sites = Array.from({ length: count }, (_, i) => `s${i}-n${count}-${server}.bench.example`);
        say(`seeding ${count} sites (${fmt(count * 300)} events through the signal store)`);
        const t = Date.now();
        await seedSites(db, sites);
        say(`seeded in ${fmt((Date.now() - t) / 1000, 1)} s`);
        const base = await runPhase({
          name: `${server}-timer-${count}`,
          server,
          db,
          dir: db.dir,
          bundlePath,
          pgPid,
          count,
          kind: 'timer',
          sites,
        });
        const loops = await runPhase({
          name: `${server}-sites-${count}`,
          server,
          db,
          dir: db.dir,
          bundlePath,
          pgPid,
          count,
          kind: 'sites',
          sites,
        });
        outcomes.push({ server, sites: count, ...report(server, base, loops) });
      }
    }
    if (TICK_MS === TARGET.tickMs && SITES.includes(TARGET.sites)) {
      for (const t of outcomes.filter((o) => o.sites === TARGET.sites)) {
        heading(
          `Target on the ${t.server} server (${TARGET.sites} sites every ${TARGET.tickMs / 1000} s, p95 tick ` +
            `lag < ${TARGET.p95Ms} ms): ${t.met ? 'met' : 'NOT met'}`,
        );
      }
    }
  } finally {
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:sites failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
