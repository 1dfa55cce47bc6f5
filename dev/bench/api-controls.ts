/**
 * `npm run bench:api-controls` — controls out, on this machine: 1,000 simulated crawlers (one per site)
 * poll `GET /v1/sites/{site}/controls` every 5 s with `If-None-Match`, while the controls of one site
 * change every second (written by the product's writer, `writeControls`, as the action activity does)
 * and one SSE subscriber follows the whole fleet. Figures:
 *   - poll latency p50/p99 (client round trip, same process, and server-side), share answered 304, and
 *     database queries sent by the API (its pool instrumented) against polls;
 *   - baseline in the same run: the same crawlers and schedule against a route that reads the row for
 *     every poll (what the API would cost without the feed);
 *   - the delay from a change's COMMIT to its SSE event (p50/max over the changes made).
 * A private embedded PostgreSQL; the server in-process; no Temporal (the API is given one that rejects).
 *
 * Options (environment): BENCH_CRAWLERS (1000), BENCH_POLL_S (5), BENCH_SECONDS (60, the cached run),
 * BENCH_BASELINE_SECONDS (30), BENCH_TOKENS (10: crawlers share a token per team/deployment).
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { Agent, request } from 'undici';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import { createToken } from '../../server/api/tokens';
import type { Controls } from '../../core/control/controls';
import { workflowIdForSite } from '../../core/common/names';
import { controlsOf, readControls, writeControls } from '../../server/db/controls';
import type { Pool } from '../../server/db/pool';
import { createApiPool } from '../../server/api/start-api';
import { openSse, type SseEvent } from '../../test/kit/sse-client';
import { fmt, heading, line, percentile, startBenchDb } from './support';

const CRAWLERS = Number(process.env.BENCH_CRAWLERS ?? 1_000);
const POLL_MS = Number(process.env.BENCH_POLL_S ?? 5) * 1000;
const RUN_MS = Number(process.env.BENCH_SECONDS ?? 60) * 1000;
const BASELINE_MS = Number(process.env.BENCH_BASELINE_SECONDS ?? 30) * 1000;
const TOKENS = Number(process.env.BENCH_TOKENS ?? 10);
const CHANGE_EVERY_MS = 1_000;
const TARGET = { p99Ms: 10, share304: 0.95, sseMs: 1_000 };

const say = (m: string): void => void process.stderr.write(`[bench:api-controls] ${m}\n`);
const siteOf = (i: number) => `crawl-${String(i).padStart(4, '0')}.example.com`;
const NOMINAL: Controls = {
  concurrencyLimit: 16,
  revisitMultiplier: 1,
  paused: false,
  canaryOnly: false,
  effectiveCostMultiplier: 1,
  band: 'healthy',
  reason: 'nominal',
};

interface Poll {
  status: number;
  clientMs: number;
  /** The crawler's first poll (no ETag yet: a 200 by necessity). */
  first: boolean;
  startedAt: number;
}

/** Counts the queries sent through a pool (the API's), as a wrapper around the real pool. */
function countQueries(pool: Pool): { count(): number } {
  let n = 0;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    n += 1;
    return original(...args);
  };
  return { count: () => n };
}

/** Changes a site's controls the way the action activity does; returns the version and when COMMIT was sent. */
async function change(pool: Pool, site: string, paused: boolean): Promise<{ version: number; commitAt: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const old = await readControls(client, site, { forUpdate: true });
    const next: Controls = {
      ...(old ? controlsOf(old) : NOMINAL),
      paused,
      canaryOnly: paused,
      band: paused ? 'resisting' : 'degrading',
      reason: paused ? 'paused (bench)' : 'resumed (bench)',
    };
    const { version } = await writeControls(
      client,
      {
        site,
        workflowId: workflowIdForSite(site),
        actionKey: `dev/bench/${randomUUID()}`,
        next,
        changedFields: ['paused', 'canaryOnly', 'band', 'reason'],
        routeDiagnosis: null,
        assessmentKey: null,
        decisionKey: null,
        actor: 'bench',
      },
      old,
    );
    const commitAt = performance.now();
    await client.query('COMMIT');
    return { version, commitAt };
  } finally {
    client.release();
  }
}

/** Every crawler polls its site every POLL_MS (fixed rate, starts spread over the first interval) until `ms` passed. */
async function runCrawlers(opts: {
  url: (site: string) => string;
  tokens: string[];
  ms: number;
  dispatcher: Agent;
}): Promise<Poll[]> {
  const polls: Poll[] = [];
  const start = performance.now();
  const end = start + opts.ms;
  const etags = new Map<number, string>();
  const crawler = async (i: number): Promise<void> => {
    let due = start + (i / CRAWLERS) * POLL_MS;
    for (;;) {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (performance.now() >= end) return;
      const etag = etags.get(i);
      const headers: Record<string, string> = { authorization: `Bearer ${opts.tokens[i % opts.tokens.length]!}` };
      if (etag !== undefined) headers['if-none-match'] = etag;
      const t = performance.now();
      const res = await request(opts.url(siteOf(i)), { dispatcher: opts.dispatcher, headers });
      await res.body.dump();
      polls.push({ status: res.statusCode, clientMs: performance.now() - t, first: etag === undefined, startedAt: t });
      const tag = res.headers.etag;
      if (res.statusCode === 200 && typeof tag === 'string') etags.set(i, tag);
      due += POLL_MS;
    }
  };
  await Promise.all(Array.from({ length: CRAWLERS }, (_, i) => crawler(i)));
  return polls;
}

function summarise(label: string, polls: Poll[], serverMs: number[]): { p99: number; share304: number } {
  const steady = polls.filter((p) => !p.first);
  const ms = steady.map((p) => p.clientMs);
  const share304 = steady.filter((p) => p.status === 304).length / steady.length;
  const other = polls.filter((p) => p.status !== 200 && p.status !== 304).length;
  line(
    `${label}: polls (first of each crawler / after)`,
    `${fmt(polls.length)} (${fmt(polls.length - steady.length)} / ` +
      `${fmt(steady.length)})${other > 0 ? `, ${fmt(other)} neither 200 nor 304` : ''}`,
  );
  line(`${label}: answered 304 (polls after the first)`, `${fmt(share304 * 100, 1)} %`);
  line(
    `${label}: client round trip p50 / p99 / max`,
    `${fmt(percentile(ms, 0.5), 2)} / ${fmt(percentile(ms, 0.99), 2)} / ${fmt(Math.max(...ms), 1)} ms`,
  );
  if (serverMs.length > 0)
    line(
      `${label}: server time (Fastify) p50 / p99`,
      `${fmt(percentile(serverMs, 0.5), 3)} / ${fmt(percentile(serverMs, 0.99), 3)} ms`,
    );
  return { p99: percentile(ms, 0.99), share304 };
}

async function main(): Promise<void> {
  const db = await startBenchDb();
  // The API's own pool (its size and limits), as `target-health api` runs it.
  const apiPool = createApiPool(db.databaseUrl);
  const queries = countQueries(apiPool);
  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: CRAWLERS + 10 });
  try {
    say(`seeding ${CRAWLERS} sites with controls and ${TOKENS} read tokens`);
    await db.pool.query(
      `INSERT INTO site_controls (site, concurrency_limit, revisit_multiplier, paused, canary_only,
                                  effective_cost_multiplier, band, reason, workflow_id, updated_by)
       SELECT s, 16, 1, false, false, 1, 'healthy', 'nominal', 'site-health:' || s, 'bench'
         FROM (SELECT 'crawl-' || lpad(i::text, 4, '0') || '.example.com' AS s
                 FROM generate_series(0, $1::int - 1) i) t`,
      [CRAWLERS],
    );
    const tokens = await Promise.all(
      Array.from({ length: TOKENS }, async (_, i) => (await createToken(db.pool, `crawlers-${i}`, ['read'])).token),
    );

    const settings = apiEnvSchema.parse({ TH_API_PORT: '0' });
    const app = await buildApi({
      pool: apiPool,
      temporal: () => Promise.reject(new Error('no Temporal in this benchmark')),
      logger: pino({ level: 'warn' }),
      settings,
    });
    // The baseline: the same answer with the row read for every poll (the API without its feed).
    app.get('/bench/uncached/:site/controls', { config: { scope: 'read' } }, async (req, reply) => {
      const record = await readControls(apiPool, (req.params as { site: string }).site);
      if (record === undefined) return reply.code(404).send();
      const etag = `"${record.version}"`;
      if (req.headers['if-none-match'] === etag) return reply.code(304).header('etag', etag).send();
      return reply.header('etag', etag).send({
        site: record.site,
        ...controlsOf(record),
        version: record.version,
        updatedAt: record.updatedAt.toISOString(),
      });
    });
    const serverMs = { cached: [] as number[], uncached: [] as number[] };
    app.addHook('onResponse', async (req, reply) => {
      const route = req.routeOptions.url;
      if (route === '/v1/sites/:site/controls') serverMs.cached.push(reply.elapsedTime);
      else if (route === '/bench/uncached/:site/controls') serverMs.uncached.push(reply.elapsedTime);
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });

    process.stdout.write(
      `Controls out benchmark — ${fmt(CRAWLERS)} crawlers polling every ${POLL_MS / 1000} s with ` +
        `If-None-Match, ${TOKENS} tokens, one change a second, one SSE subscriber; server, clients and ` +
        `PostgreSQL on this machine (shared with other work)\n`,
    );

    say(`cached run: ${RUN_MS / 1000} s`);
    const q0 = queries.count();
    const feed0 = app.controlsFeed.status().queries;
    // Clients and server share this process's event loop: a stall (the machine busy elsewhere, GC) delays
    // every request in flight. Its size is printed beside the client-side figures.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cachedRun = runCrawlers({ url: (s) => `${url}/v1/sites/${s}/controls`, tokens, ms: RUN_MS, dispatcher });
    // Sites are loaded lazily by the crawlers' first polls; then one SSE subscriber follows the whole fleet
    // (its snapshot is one query) and the controls of one site change every second until the run ends.
    await new Promise((r) => setTimeout(r, POLL_MS + 500));
    // From here on every crawler holds an ETag: the steady state a long-running fleet lives in.
    const steadyFrom = performance.now();
    const qSteady = queries.count();
    const feedSteady = app.controlsFeed.status().queries;
    const sse = await openSse(`${url}/v1/controls/stream`, { authorization: `Bearer ${tokens[0]!}` });
    await sse.waitFor((e) => e.event === 'snapshot', { timeoutMs: 30_000, what: 'the snapshot' });
    const arrivals = new Map<string, SseEvent>();
    sse.onEvent((e) => {
      if (e.event !== 'controls') return;
      const d = JSON.parse(e.data) as { site: string; version: number };
      arrivals.set(`${d.site}@${d.version}`, e);
    });
    const changes: Array<{ key: string; commitAt: number }> = [];
    let changing = true;
    const changer = (async () => {
      let n = 0;
      while (changing) {
        const site = siteOf((n * 7919) % CRAWLERS);
        const { version, commitAt } = await change(db.pool, site, n % 2 === 0);
        changes.push({ key: `${site}@${version}`, commitAt });
        n += 1;
        await new Promise((r) => setTimeout(r, CHANGE_EVERY_MS));
      }
    })();
    const cached = await cachedRun;
    loopDelay.disable();
    changing = false;
    await changer;
    const queriesEnd = queries.count();
    const feedEnd = app.controlsFeed.status().queries;
    const apiQueries = queriesEnd - q0;
    const feedQueries = feedEnd - feed0;
    // Let the last change arrive.
    const last = changes.at(-1);
    if (last !== undefined)
      await sse
        .waitFor(() => arrivals.has(last.key), { timeoutMs: 10_000, what: 'the last change' })
        .catch(() => undefined);
    sse.close();

    say(`baseline run: ${BASELINE_MS / 1000} s`);
    const b0 = queries.count();
    const baseline = await runCrawlers({
      url: (s) => `${url}/bench/uncached/${s}/controls`,
      tokens,
      ms: BASELINE_MS,
      dispatcher,
    });
    const baselineQueries = queries.count() - b0;

    heading('Polling GET /v1/sites/{site}/controls with If-None-Match');
    const c = summarise('cached', cached, serverMs.cached);
    line(
      'cached: database queries by the API, whole run',
      `${fmt(apiQueries)} (feed: ${fmt(feedQueries)}: site loads, change reads, snapshot; tokens: ` +
        `${fmt(apiQueries - feedQueries)})`,
    );
    // Each query served at most one poll (change reads and the snapshot serve none): a lower bound on polls without
    // one.
    const noDbAll = Math.max(0, cached.length - apiQueries) / cached.length;
    line(
      'cached: polls without a database round trip, whole run',
      `≥ ${fmt(noDbAll * 100, 1)} % of ${fmt(cached.length)} (the first poll of each crawler loads its site)`,
    );
    const steady = cached.filter((p) => p.startedAt >= steadyFrom);
    const steadyQueries = queriesEnd - qSteady;
    const noDb = Math.max(0, steady.length - steadyQueries) / steady.length;
    line(
      'cached, steady state (every crawler has polled once)',
      `${fmt(steady.length)} polls, ${fmt(steadyQueries)} queries (feed: ${fmt(feedEnd - feedSteady)}, tokens: ` +
        `${fmt(steadyQueries - (feedEnd - feedSteady))})`,
    );
    line(
      'cached, steady state: polls without a database round trip',
      `≥ ${fmt(noDb * 100, 1)} % (1 query per ${fmt(steady.length / Math.max(1, steadyQueries), 0)} polls)`,
    );
    line(
      'cached: event-loop delay of this process p99 / max',
      `${fmt(loopDelay.percentile(99) / 1e6, 1)} / ${fmt(loopDelay.max / 1e6, 1)} ms`,
    );
    const b = summarise('baseline', baseline, serverMs.uncached);
    line('baseline: database queries by the API', `${fmt(baselineQueries)} for ${fmt(baseline.length)} polls`);
    line('p99 round trip, cached vs baseline', `${fmt(c.p99, 2)} vs ${fmt(b.p99, 2)} ms (${fmt(b.p99 / c.p99, 1)}×)`);

    heading('A change (COMMIT) → its SSE event');
    const delays = changes.map((ch) => {
      const e = arrivals.get(ch.key);
      return e === undefined ? Number.POSITIVE_INFINITY : e.receivedAt - ch.commitAt;
    });
    const missed = delays.filter((d) => !Number.isFinite(d)).length;
    const seen = delays.filter((d) => Number.isFinite(d));
    line('changes made / received on the stream', `${fmt(changes.length)} / ${fmt(seen.length)}`);
    line(
      'COMMIT sent → event received, p50 / max',
      seen.length > 0 ? `${fmt(percentile(seen, 0.5), 1)} / ${fmt(Math.max(...seen), 1)} ms` : 'none received',
    );

    heading('Targets');
    line(`p99 ≤ ${TARGET.p99Ms} ms (cached, client round trip)`, c.p99 <= TARGET.p99Ms ? 'met' : 'NOT met');
    line('≥ 95 % answered 304 (polls after the first)', c.share304 >= TARGET.share304 ? 'met' : 'NOT met');
    line('≥ 95 % of polls without a database round trip (steady state)', noDb >= 0.95 ? 'met' : 'NOT met');
    line(
      `a change reaches an SSE subscriber ≤ ${TARGET.sseMs} ms (max)`,
      missed === 0 && seen.length > 0 && Math.max(...seen) <= TARGET.sseMs ? 'met' : 'NOT met',
    );
    await app.close();
  } finally {
    await dispatcher.close();
    await apiPool.end();
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
