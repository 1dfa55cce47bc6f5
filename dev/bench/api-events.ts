/**
 * `npm run bench:api-events` — `POST /v1/events` on this machine: batches of 1,000 realistic events (a
 * tenth carrying a 4 KB body sample) from several concurrent clients, against a baseline measured in
 * the same run — the same events sent one request per event by as many clients.
 *
 * The server is the real one (`buildApi`, with its ingest threads as `target-health api` starts it), in
 * this process, listening on a random port, over a private
 * embedded PostgreSQL (dev/bench/support.ts); no Temporal (the route does not need it: the client given
 * rejects). Bodies are serialised before the clock starts (a crawler has its batch in hand when it
 * sends), and every run is checked afterwards: each event is in the raw table and the minute rollups.
 * Environment: BENCH_API_EVENTS (events in the batched run, default 200,000), BENCH_API_CLIENTS (4).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Pool as HttpPool } from 'undici';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import { createToken } from '../../server/api/tokens';
import { createLogger } from '../../server/logging/logger';
import { normalPageHead, renderPage, type PageContext } from '../../core/scenarios/pages';
import type { PageType } from '../../core/scenarios/fleet';
import { Rng } from '../../core/scenarios/rng';
import { generateEvents } from './event-generator';
import { withTiles } from './realistic-events';
import { cpuMs, treeCpuMs } from './proc-stats';
import { fmt, heading, line, seconds, startBenchDb, type BenchDb } from './support';

const TOTAL = Number(process.env.BENCH_API_EVENTS ?? 200_000);
const CLIENTS = Number(process.env.BENCH_API_CLIENTS ?? 4);
const BATCH = 1_000;
/** One request per event costs a round trip each: a few thousand give a stable rate. */
const BASELINE_EVENTS = 4_000;
const BODY_SAMPLE_CHARS = 4_096;
const HOUR = 3_600_000;

/** A product-grid page head cut at 4 KB: what a crawler sampling the first 4 KB of a normal page sends. */
function normalBody(rng: Rng, c: PageContext): string {
  return withTiles(rng, normalPageHead(rng, 'cloudflare', c).bodySample, BODY_SAMPLE_CHARS);
}

/** Events from the store benchmark's generator, every tenth with a body sample (a block page when refused). */
function events(site: string, count: number, seed: number, now: number): Array<Record<string, unknown>> {
  const rng = new Rng(seed);
  const out: Array<Record<string, unknown>> = [];
  let i = 0;
  for (const e of generateEvents({ site, from: now - HOUR, to: now - 1_000, count, seed, ids: true })) {
    if (i++ % 10 === 0) {
      const c: PageContext = {
        host: site,
        pageType: e.pageType as PageType,
        path: `/p/item-${i}`,
        country: 'DE',
        ts: e.ts as number,
      };
      e.bodySample =
        e.status === 200
          ? normalBody(rng, c)
          : renderPage(e.status === 403 ? 'cloudflare-challenge' : 'rate-limited', rng, c).bodySample;
    }
    out.push(e);
  }
  return out;
}

const ndjson = (batch: ReadonlyArray<Record<string, unknown>>): Buffer =>
  Buffer.from(batch.map((e) => JSON.stringify(e)).join('\n') + '\n');

interface Run {
  events: number;
  requests: number;
  seconds: number;
  bytesSent: number;
  /** CPU per event in µs: this process (server and clients, all threads) and PostgreSQL (all its processes). */
  nodeCpuUs: number;
  postgresCpuUs: number;
}

/** The PostgreSQL server's process id (its backends are its children). */
function postmasterOf(db: BenchDb): number {
  return Number(readFileSync(join(db.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** Sends the bodies from `clients` concurrent connections (each its own keep-alive socket); fails on any non-200. */
async function send(
  db: BenchDb,
  url: string,
  token: string,
  bodies: readonly Buffer[],
  eventsPerBody: number,
  headers: Record<string, string>,
  clients: number,
): Promise<Run> {
  const http = new HttpPool(url, { connections: clients, pipelining: 1 });
  let next = 0;
  let bytesSent = 0;
  const postmaster = postmasterOf(db);
  const cpu0 = { node: cpuMs(process.pid), postgres: treeCpuMs(postmaster) };
  const t = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let i = next++; i < bodies.length; i = next++) {
          const r = await http.request({
            method: 'POST',
            path: '/v1/events',
            body: bodies[i],
            headers: { authorization: `Bearer ${token}`, ...headers },
          });
          const text = await r.body.text();
          if (r.statusCode !== 200) throw new Error(`POST /v1/events answered ${r.statusCode}: ${text.slice(0, 300)}`);
          const answer = JSON.parse(text) as { inserted: number; rejected: unknown[] };
          if (answer.inserted !== eventsPerBody || answer.rejected.length > 0)
            throw new Error(`a batch was not stored whole: ${text.slice(0, 300)}`);
          bytesSent += bodies[i]!.length;
        }
      }),
    );
  } finally {
    await http.close();
  }
  const elapsed = seconds(t);
  const events = bodies.length * eventsPerBody;
  const cpuUs = (ms: number) => (ms * 1000) / events;
  return {
    events,
    requests: bodies.length,
    seconds: elapsed,
    bytesSent,
    nodeCpuUs: cpuUs(cpuMs(process.pid) - cpu0.node),
    postgresCpuUs: cpuUs(treeCpuMs(postmaster) - cpu0.postgres),
  };
}

/** Every event of the run is in the raw table and in the minute rollups: the rate counts finished work. */
async function checkStored(db: BenchDb, site: string, expected: number): Promise<void> {
  const { rows } = await db.pool.query<{ raw: string; minute: string | null }>(
    'SELECT (SELECT count(*) FROM request_events WHERE site = $1) AS raw, (SELECT sum(requests) FROM ' +
      "rollup_minute WHERE site = $1 AND route_key = '*') AS minute",
    [site],
  );
  if (Number(rows[0]!.raw) !== expected || Number(rows[0]!.minute) !== expected)
    throw new Error(`${site}: ${rows[0]!.raw} raw rows, ${rows[0]!.minute} in rollups; expected ${expected}`);
}

function batches(site: string, count: number, seed: number, now: number): Buffer[] {
  const all = events(site, count, seed, now);
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += BATCH) out.push(ndjson(all.slice(i, i + BATCH)));
  return out;
}

async function main(): Promise<void> {
  const db = await startBenchDb();
  // The limit is per token and minute; this run sends far more than a crawler would.
  const settings = { ...apiEnvSchema.parse({ TH_API_PORT: '0' }), TH_API_RATE_LIMIT: 10_000_000 };
  // As `target-health api` runs it: NDJSON bodies parsed and stored by the ingest threads.
  const ingestThreads = {
    script: join(__dirname, '..', '..', 'server', 'ingest', 'ingest-worker.js'),
    databaseUrl: db.databaseUrl,
  };
  const app = await buildApi({
    pool: db.pool,
    temporal: () => Promise.reject(new Error('no Temporal in this benchmark')),
    logger: createLogger('warn'),
    settings,
    ingestThreads,
  });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const { token } = await createToken(db.pool, 'bench', ['ingest']);
    const now = Date.now();
    process.stdout.write(
      `POST /v1/events benchmark — server in this process on ${url}, embedded PostgreSQL, ${CLIENTS} ` +
        `concurrent clients, ` +
        `batches of ${fmt(BATCH)} events (every tenth with a ${fmt(BODY_SAMPLE_CHARS)}-character body sample)\n`,
    );

    // Warm-up (JIT, partitions, classification contexts), not counted.
    await send(
      db,
      url,
      token,
      batches('warmup.example.com', 20 * BATCH, 9, now),
      BATCH,
      { 'content-type': 'application/x-ndjson' },
      CLIENTS,
    );

    const baselineSite = 'one-per-event.example.com';
    const singles = events(baselineSite, BASELINE_EVENTS, 3, now).map((e) => ndjson([e]));
    const baseline = await send(db, url, token, singles, 1, { 'content-type': 'application/x-ndjson' }, CLIENTS);
    await checkStored(db, baselineSite, BASELINE_EVENTS);

    const site = 'batched.example.com';
    const bodies = batches(site, TOTAL, 1, now);
    const batched = await send(db, url, token, bodies, BATCH, { 'content-type': 'application/x-ndjson' }, CLIENTS);
    await checkStored(db, site, TOTAL);

    const gzSite = 'gzip.example.com';
    const gzTotal = Math.min(TOTAL, 100_000);
    const gzBodies = batches(gzSite, gzTotal, 2, now).map((b) => gzipSync(b, { level: 6 }));
    const gz = await send(
      db,
      url,
      token,
      gzBodies,
      BATCH,
      { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
      CLIENTS,
    );
    await checkStored(db, gzSite, gzTotal);

    heading('Events in: validation, classification, raw rows and rollups committed before each answer');
    const rate = (r: Run) => r.events / r.seconds;
    line(`baseline: one request per event (${fmt(BASELINE_EVENTS)} events)`, `${fmt(rate(baseline))} events/s`);
    line(
      `batches of ${fmt(BATCH)}, NDJSON (${fmt(TOTAL)} events, ${fmt(batched.bytesSent / 2 ** 20, 0)} MiB)`,
      `${fmt(rate(batched))} events/s   ${fmt(rate(batched) / rate(baseline), 1)}× baseline`,
    );
    line(
      `  latency: mean time per request with ${CLIENTS} in flight`,
      `${fmt((batched.seconds * 1000 * CLIENTS) / batched.requests, 1)} ms`,
    );
    line(
      `batches of ${fmt(BATCH)}, NDJSON + gzip (${fmt(gzTotal)} events, ${fmt(gz.bytesSent / 2 ** 20, 0)} MiB sent)`,
      `${fmt(rate(gz))} events/s   ${fmt(rate(gz) / rate(baseline), 1)}× baseline`,
    );
    const cpu = (r: Run) => `CPU per event: Node ${fmt(r.nodeCpuUs, 1)} µs, PostgreSQL ${fmt(r.postgresCpuUs, 1)} µs`;
    line('  baseline', cpu(baseline));
    line('  batches', cpu(batched));
    line('  batches + gzip', cpu(gz));
    line('(each run checked: every event in the raw table and the minute rollups)', '');
    const met = rate(batched) >= 50_000 && rate(batched) / rate(baseline) >= 20;
    line('targets: ≥ 50,000 events/s; ≥ 20× one request per event', met ? 'met' : 'NOT met');
  } finally {
    await app.close();
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
