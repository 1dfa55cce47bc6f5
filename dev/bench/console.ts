/**
 * `npm run bench:console` — the console's server time: the Fleet page at 1,000 sites and the Site page of a busy
 * site with two weeks of traffic, each against the target (≤ 300 ms) and against a baseline measured in the same
 * run: the JSON the same page stands on (`GET /v1/sites`, every page of it, for the Fleet; `GET /v1/sites/:site`,
 * the loop's state and recent ticks, for the Site page).
 *
 * The stack is the real one: the API server (console routes included) on a random port, a Temporal dev server
 * (SQLite file, as `npm start` runs it), an embedded PostgreSQL with the product's migrations.
 *   - The fleet: 1,000 running `siteHealth` loops in Temporal's visibility store with their search attributes
 *     (what the fleet reader lists), started on a task queue no worker polls — the fleet reader never wakes a
 *     loop but the waiting ones, and none of these waits — and a day of 60 s ticks each in `assessments`
 *     (1,440 rows a site: what the sparklines read).
 *   - The busy site: a real loop on a real worker, 14 days of traffic through the signal store (30 requests a
 *     minute; the last 3 hours 60 % Cloudflare challenges with their title: what "served" reads), and 14 days
 *     of 60 s ticks in `assessments` (what the two-week chart reads).
 * The seeded tables are vacuumed and analysed, as autovacuum would have them in steady state.
 * Requests are sent one at a time from this process over HTTP (a session cookie, or a read token for the JSON),
 * after 3 warm-up requests each; the figure is the time to the last byte of the answer. The Fleet page's cold
 * figure is its first request since the API started (it waits for a listing); its steady figure
 * requests one after another (a read of the fleet answers for 5 s: client/console/fleet-snapshot.ts); its next
 * figure 5 requests each made 5 s after the last (the kept read has expired: each waits for a listing); its
 * after-a-change figure 5 requests each made just after a control change dropped the kept read (they wait for a
 * listing). The Site page's cold figures are with no chart kept (client/console/chart-cache.ts
 * emptied before each request), its warm ones a reload that finds the same data (the busy loop's 60 s ticks still
 * land during them, as they would). Parts are timed in this process: the sparklines from the kept buckets and
 * from the ticks (the plain statement), the day chart's read and drawing.
 *
 * Options: --sites 1000 (BENCH_SITES), --repeats 30 (BENCH_REPEATS).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import pino from 'pino';
import { workflowIdForSite } from '../../core/common/names';
import { SITE_HEALTH_WORKFLOW, stateQuery, type SiteHealthWorkflow } from '../../loop/messages';
import { AwaitingHuman, HealthBand, HealthScore, ParserHealth, TargetSite } from '../../loop/search-attributes';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import { createToken } from '../../server/api/tokens';
import { upsertSite } from '../../server/db/sites';
import { ingestEvents } from '../../server/db/signal-store';
import { ensureTemporalCli } from '../../stack/temporal-cli';
import { freePort } from '../../stack/free-port';
import { startTemporalDevServer } from '../../stack/temporal-dev-server';
import { createWorker } from '../../worker/create-worker';
import { registerConsoleRoutes } from '../../client/console/routes';
import { siteCharts } from '../../client/console/chart-cache';
import { REFRESH_MS } from '../../client/console/fleet-hub';
import { scoreBuckets, scoreBucketsFromTicks } from '../../server/db/score-trend';
import { latestScores } from '../../server/db/assessments';
import { latestChanges } from '../../server/db/history';
import { siteListQuery } from '../../server/api/site-list';
import { trendRange } from '../../server/fleet/trend';
import { readChartData } from '../../tools/charts/read-history';
import { renderSvg } from '../../tools/charts/render';
import { buildChartSpec } from '../../tools/charts/spec';
import { fmt, heading, line, median, percentile, startBenchDb, type BenchDb } from './support';

function option(flag: string, envName: string, fallback: string): string {
  const i = process.argv.indexOf(flag);
  if (i >= 0 && process.argv[i + 1] !== undefined) return process.argv[i + 1]!;
  return process.env[envName] ?? fallback;
}

const SITES = Number(option('--sites', 'BENCH_SITES', '1000'));
const REPEATS = Number(option('--repeats', 'BENCH_REPEATS', '30'));
const TARGET_MS = 300;
const WARMUP = 3;
const DAY = 86_400_000;
const MINUTE = 60_000;
const BUSY = 'busy.example.com';
const BANDS = ['healthy', 'healthy', 'healthy', 'healthy', 'healthy', 'healthy', 'degrading', 'learning'] as const;

const say = (m: string): void => void process.stderr.write(`[bench:console] ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A day (or `days`) of 60 s ticks for each of `sites`, scored around 90, in one statement. */
async function seedTicks(db: BenchDb, sites: readonly string[], days: number): Promise<void> {
  await db.pool.query(
    `INSERT INTO assessments (assessment_key, site, workflow_id, tick, assessed_at, result)
     SELECT 'bench-' || s.site || '-' || t, s.site, 'site-health:' || s.site, t,
            now() - make_interval(secs => t * 60),
            jsonb_build_object(
              'assessment', jsonb_build_object('state', 'scored', 'reasons', '[]'::jsonb,
                'health', jsonb_build_object('score', 80 + (t % 20)), 'parser', jsonb_build_object('score', 100)),
              'scoring', jsonb_build_object('smoothedScore', 85 + (t % 10), 'scoredBand', 'healthy'))
       FROM unnest($1::text[]) AS s(site), generate_series(1, $2::int) AS t`,
    [sites, days * 1_440],
  );
}

/** 14 days of the busy site's traffic, 30 requests a minute; its last 3 hours 60 % Cloudflare challenges. */
async function seedBusyTraffic(db: BenchDb): Promise<number> {
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const routes = [
    { country: 'DE', pool: 'dc-1' },
    { country: 'US', pool: 'dc-2' },
    { country: 'FR', pool: 'res-1' },
  ];
  let batch: Record<string, unknown>[] = [];
  let stored = 0;
  const flush = async (): Promise<void> => {
    const r = await ingestEvents(db.pool, batch);
    if (r.rejected.length > 0) throw new Error(`events rejected: ${JSON.stringify(r.rejected.slice(0, 2))}`);
    stored += batch.length;
    batch = [];
  };
  for (let t = now - 14 * DAY; t < now; t += MINUTE) {
    const wall = t >= now - 3 * 3_600_000;
    for (let i = 0; i < 30; i++) {
      const base = { eventId: randomUUID(), ts: t + i * 1_000, site: BUSY, latencyMs: 120 + (i % 7) * 10 };
      const route = routes[i % routes.length]!;
      batch.push(
        wall && i % 5 < 3
          ? {
              ...base,
              route,
              status: 403,
              bytes: 7_000,
              headers: { 'cf-mitigated': 'challenge' },
              title: 'Just a moment...',
            }
          : { ...base, route, status: 200, bytes: 60_000, extraction: { result: 'ok', validRecords: 1 } },
      );
    }
    if (batch.length >= 10_000) await flush();
  }
  await flush();
  return stored;
}

interface Timing {
  median: number;
  p95: number;
}

interface Runs {
  warmup?: number;
  runs?: number;
  /** Done before each run, untimed. */
  before?: () => void | Promise<void>;
}

/** `run` timed `runs` times (REPEATS) after `warmup` (WARMUP) untimed runs. */
async function timed(
  run: () => Promise<void>,
  { warmup = WARMUP, runs = REPEATS, before }: Runs = {},
): Promise<Timing> {
  const times: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    await before?.();
    const t0 = process.hrtime.bigint();
    await run();
    if (i >= warmup) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { median: median(times), p95: percentile(times, 0.95) };
}

/** A request read to the last byte of its answer, which must be a 200. */
async function request(what: string, send: () => Promise<Response>): Promise<void> {
  const r = await send();
  const body = await r.text();
  if (r.status !== 200) throw new Error(`${what}: status ${r.status}: ${body.slice(0, 300)}`);
}

/** A request timed to the last byte of its answer. */
function measure(what: string, send: () => Promise<Response>, runs: Runs = {}): Promise<Timing> {
  return timed(() => request(what, send), runs);
}

function report(label: string, t: Timing, baseline: Timing | null): void {
  const vsBaseline = baseline === null ? '' : `, ×${fmt(t.median / baseline.median, 1)} the baseline`;
  line(
    label,
    `median ${fmt(t.median)} ms, p95 ${fmt(t.p95)} ms (median ${fmt(t.median / TARGET_MS, 2)} of the target` +
      `${vsBaseline})`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'th-bench-console-'));
  say(`folder ${dir}`);
  const db = await startBenchDb();
  const cli = await ensureTemporalCli({ info: say, warn: say });
  const server = await startTemporalDevServer({
    cli,
    port: await freePort(),
    namespace: 'default',
    logFile: join(dir, 'temporal.log'),
    dbFile: join(dir, 'temporal.sqlite'),
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: 'default' });
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const logger = pino({ level: 'warn' });
  let stopWorker = (): Promise<void> => Promise.resolve();
  try {
    const fleet = Array.from({ length: SITES }, (_, i) => `fleet-${String(i).padStart(5, '0')}.example.com`);
    say(`registering ${SITES} sites and a day of ticks each`);
    for (const site of [...fleet, BUSY]) await upsertSite(db.pool, site, { owner: `owner@${site}` });
    await seedTicks(db, fleet, 1);
    await seedTicks(db, [BUSY], 14);
    // As autovacuum leaves a table in steady state: visibility map set, statistics current.
    await db.pool.query('VACUUM ANALYZE assessments, assessment_score_buckets');
    say(`starting ${SITES} loops (visibility only: no worker polls their queue)`);
    const queue = `bench-console-idle-${randomUUID().slice(0, 6)}`;
    for (let i = 0; i < fleet.length; i += 50)
      await Promise.all(
        fleet.slice(i, i + 50).map((site, k) => {
          const band = BANDS[(i + k) % BANDS.length]!;
          return client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
            workflowId: workflowIdForSite(site),
            taskQueue: queue,
            args: [{ site }],
            typedSearchAttributes: [
              { key: TargetSite, value: site },
              { key: HealthBand, value: band },
              ...(band === 'learning' ? [] : [{ key: HealthScore, value: band === 'healthy' ? 92 : 70 }]),
              { key: ParserHealth, value: 100 },
              { key: AwaitingHuman, value: false },
            ],
          });
        }),
      );
    say('14 days of the busy site traffic through the signal store');
    const events = await seedBusyTraffic(db);
    say(`${events} events stored; starting its loop on a real worker`);
    const worker = await createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue: 'bench-console',
      pool: db.pool,
      logger,
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
    const handle = await client.workflow.start<SiteHealthWorkflow>(SITE_HEALTH_WORKFLOW, {
      workflowId: workflowIdForSite(BUSY),
      taskQueue: 'bench-console',
      args: [{ site: BUSY }],
    });
    for (let i = 0; (await handle.query(stateQuery)).lastAssessedAt === null; i++) {
      if (i > 240) throw new Error('the busy site did not tick within 2 minutes');
      await sleep(500);
    }
    const app = await buildApi({
      pool: db.pool,
      temporal: () => Promise.resolve(client),
      taskQueue: 'bench-console',
      logger,
      settings: apiEnvSchema.parse({ TH_API_PORT: '0' }),
      extraRoutes: [registerConsoleRoutes],
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { token } = await createToken(db.pool, 'bench-console', ['read']);
      const signIn = await fetch(`${url}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
        body: new URLSearchParams({ token }).toString(),
      });
      const cookie = /^(th_session=[^;]+);/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
      if (cookie === undefined) throw new Error(`sign-in failed: ${signIn.status}`);
      const page = (path: string) => () => fetch(`${url}${path}`, { headers: { cookie } });
      const json = (path: string) => () => fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      /** Every page of `GET /v1/sites` (500 a page), as the fleet reader reads it. */
      const allSites = async (): Promise<Response> => {
        let cursor: string | null = null;
        let last: Response;
        do {
          last = await json(`/v1/sites?limit=500${cursor === null ? '' : `&cursor=${cursor}`}`)();
          if (last.status !== 200) return last;
          cursor = ((await last.clone().json()) as { next: string | null }).next;
        } while (cursor !== null);
        return last;
      };
      // Visibility catches up with the starts asynchronously: wait until the JSON lists every site (not the
      // Fleet page, so its first request below is its first ever).
      const listedNow = async (): Promise<number> => {
        let cursor: string | null = null;
        let count = 0;
        do {
          const r = await json(`/v1/sites?limit=500${cursor === null ? '' : `&cursor=${cursor}`}`)();
          const body = (await r.json()) as { sites: unknown[]; next: string | null };
          count += body.sites.length;
          cursor = body.next;
        } while (cursor !== null);
        return count;
      };
      for (let i = 0; ; i++) {
        const count = await listedNow();
        if (count === SITES + 1) break;
        if (i > 120) throw new Error(`the fleet listed ${count} of ${SITES + 1} sites after a minute`);
        await sleep(500);
      }
      say(`measuring (${REPEATS} requests each after ${WARMUP} warm-up)`);
      const listed = [...fleet, BUSY];
      const fleetCold = await timed(() => request('fleet page', page('/console/fleet')), { warmup: 0, runs: 1 });
      const fleetBase = await measure('GET /v1/sites', allSites);
      const fleetPage = await measure('fleet page', page('/console/fleet'));
      // Each request just after a control change: the kept read is dropped, so the page waits for a listing.
      const fleetAfterChange = await measure('fleet page', page('/console/fleet'), {
        warmup: 0,
        runs: 5,
        before: async () => {
          // A person's pause of one fleet site, as the site_controls trigger announces it (a new version).
          await db.pool.query(
            `INSERT INTO site_controls (site, concurrency_limit, revisit_multiplier, paused, canary_only,
                                        effective_cost_multiplier, band, reason, workflow_id, version, updated_by,
                                        updated_at)
             VALUES ($1, 1, 1, true, true, 1, 'resisting', 'bench: paused by hand', $2, 1, 'bench', now())
             ON CONFLICT (site) DO UPDATE SET version = site_controls.version + 1, updated_at = now()`,
            [fleet[0]!, workflowIdForSite(fleet[0]!)],
          );
          // The feed reads the change and drops the kept read (the warmer lists again 200 ms later).
          await sleep(150);
        },
      });
      // Each request 5 s after the last (client/console/fleet-snapshot.ts): the kept read has expired.
      const fleetExpired = await measure('fleet page', page('/console/fleet'), {
        warmup: 0,
        runs: 5,
        before: () => sleep(REFRESH_MS + 100),
      });
      const siteBase = await measure('GET /v1/sites/:site', json(`/v1/sites/${BUSY}?history=20`));
      // Cold: the chart drawn at every request (no chart kept); warm: a reload that finds the same data.
      const coldChart = { before: () => siteCharts.clear() };
      const siteCold = await measure('site page', page(`/console/sites/${BUSY}`), coldChart);
      const sitePage = await measure('site page', page(`/console/sites/${BUSY}`));
      const twoWeeksCold = await measure('site page 14d', page(`/console/sites/${BUSY}?range=14d`), coldChart);
      const twoWeeks = await measure('site page 14d', page(`/console/sites/${BUSY}?range=14d`));
      // Parts, in this process: the sparklines from the kept buckets and from the ticks themselves (the reader
      // before migration 015), and the day's chart: its read, its drawing, and a drawing found kept.
      const trend = await timed(async () => {
        await scoreBuckets(db.pool, listed, trendRange(new Date()));
      });
      const trendPlain = await timed(
        async () => {
          await scoreBucketsFromTicks(db.pool, listed, trendRange(new Date()));
        },
        { warmup: 1, runs: 5 },
      );
      // The listing's parts (server/api/site-list.ts): the visibility list RPCs (Temporal), and the page's two
      // statements (latest scores, latest control changes) for every site.
      const visibility = await timed(async () => {
        let token: Uint8Array = new Uint8Array();
        do {
          const r = await client.workflowService.listWorkflowExecutions({
            namespace: 'default',
            query: siteListQuery({}),
            pageSize: 500,
            nextPageToken: token,
          });
          token = r.nextPageToken ?? new Uint8Array();
        } while (token.length > 0);
      });
      const listStatements = await timed(async () => {
        await Promise.all([latestScores(db.pool, listed), latestChanges(db.pool, listed)]);
      });
      const chartRead = await timed(async () => {
        const to = Date.now();
        await readChartData(db.pool, BUSY, to - DAY, to);
      });
      const daySpec = buildChartSpec((await readChartData(db.pool, BUSY, Date.now() - DAY, Date.now())).data);
      const chartDraw = await timed(async () => {
        await renderSvg(daySpec);
      });
      const chartKept = await timed(async () => {
        await siteCharts.svg(daySpec);
      });
      const load = loadavg()[0]!;

      heading(`Console server time (${SITES + 1} sites; ${REPEATS} requests each; target ≤ ${TARGET_MS} ms)`);
      report(`baseline: GET /v1/sites, all pages (${SITES + 1} sites)`, fleetBase, null);
      report('Fleet page (/console/fleet), first request since the API started', fleetCold, fleetBase);
      report(`Fleet page, steady use (a read answers for ${REFRESH_MS / 1000} s)`, fleetPage, fleetBase);
      report(`Fleet page, each request ${REFRESH_MS / 1000} s after the last (5 runs)`, fleetExpired, fleetBase);
      report('Fleet page, just after a control change (waits for a listing; 5 runs)', fleetAfterChange, fleetBase);
      report('  of it: the visibility list (Temporal, pages of 500)', visibility, null);
      report('  of it: latest scores and changes (2 statements)', listStatements, null);
      report('  of it: the sparklines (kept buckets, every site)', trend, null);
      report('  the same from the ticks (plain statement, 5 runs)', trendPlain, null);
      report(`baseline: GET /v1/sites/${BUSY}?history=20`, siteBase, null);
      report('Site page, day chart, cold (chart drawn)', siteCold, siteBase);
      report('Site page, day chart, warm (reload, same data)', sitePage, siteBase);
      report('  of it: the day chart read (tools/charts)', chartRead, null);
      report('  the day chart drawn (Vega: compile, parse, SVG)', chartDraw, null);
      report('  the day chart found kept (hash of its spec)', chartKept, null);
      report('Site page, ?range=14d, cold (chart drawn)', twoWeeksCold, siteBase);
      report('Site page, ?range=14d, warm', twoWeeks, siteBase);
      line('busy site traffic', `${fmt(events)} events over 14 days, 20,160 stored ticks`);
      line('load average (1 min) while measuring', `${fmt(load, 1)} on ${cpus().length} cores`);
    } finally {
      await app.close();
    }
  } finally {
    await stopWorker();
    await workerConnection.close();
    await connection.close();
    await server.stop();
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
