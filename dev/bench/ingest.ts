/**
 * `npm run bench:store` — the signal store's figures on this machine, each against a baseline measured
 * in the same run:
 *   1. ingest through the recorder library and through `target-health ingest` (rollups included),
 *      the recorder as a crawler on the database runs it: its `postgresSink` writes batches to the
 *      event inbox, and the API's inbox drainer (with the API's ingest threads) stores them — timed
 *      until every event is in the store, with the wait from inbox write to stored per batch,
 *      against one INSERT per event — for two mixes of events (BENCH_MIX=plain|realistic|both, default
 *      both): "plain", the body-less counters of one site over one day (the earlier figure, kept as the
 *      baseline), and "realistic" (dev/bench/realistic-events.ts: a tenth of the events with 1–4 KB pages,
 *      headers and titles, 15 days of history, 40 sites; the CLI file with ISO times, as `simulate`
 *      writes it);
 *   2. the tick's read (current window + 14-day baseline) for a site with 200,000 events a day, against
 *      computing the same from raw events; and the read cost when the site's volume is 10× smaller
 *      (and, with BENCH_FULL=1, 10× larger).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, createWriteStream, fsyncSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadMinuteDays } from '../../server/config/env';
import { createIngester } from '../../server/db/signal-store/ingest';
import { ensurePartitions } from '../../server/db/signal-store/partitions';
import { readSiteWindows } from '../../server/db/signal-store/read-windows';
import { DEFAULT_WINDOW_SPEC } from '../../server/db/signal-store/types';
import { createRecorder, type EventSink, type RecordInput } from '@target-health/crawler/recorder';
import { postgresSink } from '@target-health/crawler/postgres';
import { apiIngestThreads } from '../../server/api/start-api';
import { IngestThreads } from '../../server/api/ingest-threads';
import { ingestBody } from '../../server/api/events-batch';
import { InboxDrainer } from '../../server/api/inbox-drainer';
import { inboxBacklog } from '../../server/db/signal-store/inbox';
import { createLogger } from '../../server/logging/logger';
import { generateEvents } from './event-generator';
import { generateRealisticEvents, realisticSites, REALISTIC_DEFAULTS } from './realistic-events';
import { cpuMs, treeCpuMs } from './proc-stats';
import { fmt, heading, line, median, percentile, seconds, startBenchDb, type BenchDb } from './support';

const DAY = 86_400_000;
const INGEST_EVENTS = Number(process.env.BENCH_INGEST_EVENTS ?? 1_000_000);
// Each autocommit INSERT waits for its own WAL flush (~0.5 ms on this VM's disk): a small sample is enough.
const BASELINE_EVENTS = 1_000;

type MixName = 'plain' | 'realistic';

/** One mix of events: what each path ingests, and the sites they land on (to check what was stored). */
interface Mix {
  name: MixName;
  describe: string;
  events(path: 'recorder' | 'cli', now: number): { events: Iterable<Record<string, unknown>>; sites: string[] };
}

const MIXES: Record<MixName, Mix> = {
  plain: {
    name: 'plain',
    describe: 'no bodies, one site, one day',
    events: (path, now) => {
      const site = `${path}.example.com`;
      return {
        events: generateEvents({
          site,
          from: now - DAY,
          to: now,
          count: INGEST_EVENTS,
          seed: path === 'cli' ? 2 : 1,
          ids: path === 'cli',
        }),
        sites: [site],
      };
    },
  },
  realistic: {
    name: 'realistic',
    describe:
      `${REALISTIC_DEFAULTS.bodyShare * 100}% with 1–4 KB pages + headers, 15 days, ${REALISTIC_DEFAULTS.sites} ` +
      `sites`,
    events: (path, now) => {
      const sitesDomain = `${path}.realistic.example`;
      const cli = path === 'cli';
      const events = generateRealisticEvents({
        sitesDomain,
        from: now - 15 * DAY,
        to: now,
        count: INGEST_EVENTS,
        seed: cli ? 12 : 11,
        ids: cli,
        isoTs: cli,
      });
      return { events, sites: realisticSites(sitesDomain) };
    },
  },
};

interface IngestRun {
  rate: number;
  /**
   * PostgreSQL CPU per event of the maintenance the run leaves behind (the vacuum and analyze of the
   * rollups and norms it updated, which autovacuum would run soon after), done before the next run so
   * that no run pays for the one before it. Raw partitions are left to their settings (migration 008).
   */
  maintenanceUs: number;
  /** CPU per event in µs: the ingesting Node process (all its threads) and PostgreSQL (all processes). */
  nodeCpuUs: number;
  postgresCpuUs: number;
  /** The slowest ~1 s stretch of the run (events/s), for the recorder: "sustained". */
  slowestSecond?: number;
  /** The recorder's run: the crawler's event-loop delay (ms), 99th percentile and worst. */
  loopDelayMs?: { p99: number; max: number };
  /**
   * The recorder's run through the inbox: busy time per event (µs, summed over the calls in flight) of
   * the sink's inbox writes and of the drainer's batches (store + delete), and the wait from a batch's
   * inbox write to its events stored (s, by the server's clock; median, 99th percentile, worst).
   */
  inbox?: { writeUs: number; drainUs: number; waitS: { p50: number; p99: number; max: number }; writeRate: number };
}

/** Busy time of an async function's calls, summed (calls in flight overlap: a per-event cost, not a rate). */
function timed<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  total: { ns: bigint },
): (...args: A) => Promise<R> {
  return async (...args: A) => {
    const t = process.hrtime.bigint();
    try {
      return await fn(...args);
    } finally {
      total.ns += process.hrtime.bigint() - t;
    }
  };
}

async function benchRecorder(db: BenchDb, now: number, mix: Mix): Promise<IngestRun> {
  const { events, sites } = mix.events('recorder', now);
  // The crawler's side: its own pool, as postgresSink({ connectionString }) makes it.
  const inner = postgresSink({ connectionString: db.databaseUrl });
  const writeBusy = { ns: 0n };
  const sink: EventSink = {
    write: timed((batch: Parameters<EventSink['write']>[0]) => inner.write(batch), writeBusy),
    isPermanentError: (err) => inner.isPermanentError?.(err) ?? false,
    close: () => inner.close(),
  };
  // The server's side: the API's drainer, storing through the API's ingest threads.
  const threads = new IngestThreads(
    apiIngestThreads(
      join(__dirname, '..', '..', 'server', 'ingest', 'ingest-worker.js'),
      db.databaseUrl,
      loadMinuteDays(),
    ),
  );
  const ingester = createIngester(db.pool, { minuteDays: loadMinuteDays() });
  const drainBusy = { ns: 0n };
  const waits: number[] = [];
  let storedByDrainer = 0;
  const drainer = new InboxDrainer({
    pool: db.pool,
    logger: createLogger('warn', 'bench-inbox'),
    store: timed((lines: string[]) => ingestBody(ingester, { lines }, Date.now(), threads), drainBusy),
    metrics: {
      batches: () => undefined,
      events: (result, n) => {
        if (result !== 'rejected') storedByDrainer += n;
      },
      waited: (w) => waits.push(w),
    },
  });
  drainer.start();
  const recorder = createRecorder({ sink, batchSize: 5_000, highWaterMark: 50_000, flushIntervalMs: 200 });
  // Events in the store over time (drained from the inbox), sampled about every second.
  const samples: Array<{ at: bigint; stored: number }> = [];
  const sampler = setInterval(() => samples.push({ at: process.hrtime.bigint(), stored: storedByDrainer }), 1_000);
  // Events are made one at a time, as a crawler makes them (their making is inside the timing).
  const startedAt = Date.now();
  const t = process.hrtime.bigint();
  const cpu = cpuMeter(db);
  // A crawler awaits the network between requests; this one gives the event loop a turn every 100
  // events, so the loop delay measured is the recorder's own (its batch preparation), not the loop's.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  let made = 0;
  for (const e of events) {
    if (!recorder.record(e as RecordInput)) await recorder.drain();
    if (++made % 100 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await recorder.close();
  const inInbox = seconds(t);
  // Stored means in the store: wait for the drainer to empty the inbox.
  while ((await inboxBacklog(db.pool)).batches > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const s = seconds(t);
  loopDelay.disable();
  const used = cpu.stop();
  clearInterval(sampler);
  await drainer.close();
  await threads.close();
  const stats = recorder.stats();
  if (stats.stored !== INGEST_EVENTS)
    throw new Error(`recorder stored ${stats.stored} of ${INGEST_EVENTS} (${JSON.stringify(stats)})`);
  await checkStored(db, sites, startedAt);
  // Rates between consecutive samples; the first stretch (the pipeline filling) is left out.
  const rates = samples
    .slice(2)
    .map((x, i) => (x.stored - samples[i + 1]!.stored) / (Number(x.at - samples[i + 1]!.at) / 1e9));
  const maintenanceUs = await maintain(db);
  const inbox = {
    writeRate: INGEST_EVENTS / inInbox,
    writeUs: Number(writeBusy.ns) / 1000 / INGEST_EVENTS,
    drainUs: Number(drainBusy.ns) / 1000 / INGEST_EVENTS,
    waitS: { p50: percentile(waits, 0.5), p99: percentile(waits, 0.99), max: Math.max(...waits) },
  };
  return {
    rate: INGEST_EVENTS / s,
    nodeCpuUs: (used.ownMs * 1000) / INGEST_EVENTS,
    postgresCpuUs: (used.postgresMs * 1000) / INGEST_EVENTS,
    maintenanceUs,
    loopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
    inbox,
    ...(rates.length > 0 ? { slowestSecond: Math.min(...rates) } : {}),
  };
}

/**
 * CPU used from now to stop(), from /proc: this process, its exited-and-waited children (the CLI run
 * by spawnSync), and the PostgreSQL server with its backends (exited ones included: the postmaster
 * reaps them).
 */
function cpuMeter(db: BenchDb): { stop(): { ownMs: number; childrenMs: number; postgresMs: number } } {
  const postmaster = Number(readFileSync(join(db.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const start = { own: cpuMs(process.pid), withChildren: cpuMs(process.pid, true), postgres: treeCpuMs(postmaster) };
  return {
    stop: () => {
      const own = cpuMs(process.pid) - start.own;
      return {
        ownMs: own,
        childrenMs: cpuMs(process.pid, true) - start.withChildren - own,
        postgresMs: treeCpuMs(postmaster) - start.postgres,
      };
    },
  };
}

/**
 * Every event is in the raw table and in the hour and day rollups, and every event of the days that
 * keep minute rollups (TARGET_HEALTH_MINUTE_DAYS, as ingest does) in the minute rollups: the rate
 * counts finished work. `startedAt`: when the run began (a run across UTC midnight may have judged
 * its first batches by the day before).
 */
async function checkStored(db: BenchDb, sites: readonly string[], startedAt: number): Promise<void> {
  const firstMinuteDay = (at: number) => new Date(Math.floor((at - loadMinuteDays() * DAY) / DAY) * DAY);
  const { rows } = await db.pool.query<{
    raw: string;
    minute: string;
    hour: string;
    day: string;
    minute_days: string;
    minute_days_before: string;
  }>(
    `SELECT (SELECT count(*) FROM request_events WHERE site = ANY($1::text[])) AS raw,
            (SELECT sum(requests) FROM rollup_minute WHERE site = ANY($1::text[]) AND route_key = '*') AS minute,
            (SELECT sum(requests) FROM rollup_hour WHERE site = ANY($1::text[]) AND route_key = '*') AS hour,
            (SELECT sum(requests) FROM rollup_day WHERE site = ANY($1::text[]) AND route_key = '*') AS day,
            (SELECT count(*) FROM request_events WHERE site = ANY($1::text[]) AND ts >= $2) AS minute_days,
            (SELECT count(*) FROM request_events WHERE site = ANY($1::text[]) AND ts >= $3) AS minute_days_before`,
    [sites, firstMinuteDay(Date.now()), firstMinuteDay(startedAt)],
  );
  const r = rows[0]!;
  for (const what of ['raw', 'hour', 'day'] as const) {
    if (Number(r[what]) !== INGEST_EVENTS)
      throw new Error(`${sites[0]}…: ${what} holds ${r[what]} events, expected ${INGEST_EVENTS}`);
  }
  if (r.minute !== r.minute_days && r.minute !== r.minute_days_before) {
    throw new Error(
      `${sites[0]}…: minute rollups hold ${r.minute} events, expected the ${r.minute_days} of the days that ` +
        `keep minute rows`,
    );
  }
}

async function benchCli(db: BenchDb, now: number, mix: Mix): Promise<IngestRun> {
  const file = join(db.dir, `events-${mix.name}.ndjson`);
  const out = createWriteStream(file);
  const { events, sites } = mix.events('cli', now);
  for (const e of events) {
    if (!out.write(`${JSON.stringify(e)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  // Write the file back to disk now: otherwise its ~300 MB of dirty pages are flushed during the run
  // and PostgreSQL's commits wait behind them — that would measure the file, not the ingest.
  const fd = openSync(file, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  const startedAt = Date.now();
  const t = process.hrtime.bigint();
  const cpu = cpuMeter(db);
  const run = spawnSync(
    process.execPath,
    [join(__dirname, '..', '..', 'client', 'main.js'), 'ingest', file, '--json', '--no-progress'],
    {
      env: { ...process.env, DATABASE_URL: db.databaseUrl },
      encoding: 'utf8',
    },
  );
  const s = seconds(t);
  const used = cpu.stop();
  if (run.status !== 0) throw new Error(`ingest CLI failed: ${run.stderr}`);
  const summary = JSON.parse(run.stdout) as { inserted: number };
  if (summary.inserted !== INGEST_EVENTS) throw new Error(`CLI stored ${summary.inserted} of ${INGEST_EVENTS}`);
  await checkStored(db, sites, startedAt);
  const maintenanceUs = await maintain(db);
  return {
    rate: INGEST_EVENTS / s,
    nodeCpuUs: (used.childrenMs * 1000) / INGEST_EVENTS,
    postgresCpuUs: (used.postgresMs * 1000) / INGEST_EVENTS,
    maintenanceUs,
  };
}

/**
 * Runs, untimed, the maintenance a run leaves (VACUUM ANALYZE of the tables it updated in place) and
 * returns its PostgreSQL CPU per event. Without it, autovacuum ran it during the next run, and the CLI
 * figure carried the recorder run's vacuum (~6 µs an event of PostgreSQL CPU).
 */
async function maintain(db: BenchDb): Promise<number> {
  const cpu = cpuMeter(db);
  await db.pool.query('VACUUM (ANALYZE) rollup_minute, rollup_hour, rollup_day, page_norms_day');
  return (cpu.stop().postgresMs * 1000) / INGEST_EVENTS;
}

/** The baseline: what a first implementation does — one INSERT statement per event. */
async function benchOneInsertPerEvent(db: BenchDb, now: number): Promise<number> {
  const events = [
    ...generateEvents({ site: 'naive.example.com', from: now - DAY, to: now, count: BASELINE_EVENTS, seed: 3 }),
  ];
  // The partitions these rows need (the span may cross midnight UTC).
  await ensurePartitions(
    db.pool,
    'request_events',
    events.map((e) => e.ts as number),
  );
  const client = await db.pool.connect();
  const t = process.hrtime.bigint();
  try {
    for (const e of events) {
      const route = e.route as { country: string; pool: string; session: string };
      await client.query(
        `INSERT INTO request_events (ts, site, country, pool, session, page_type, status, latency_ms, bytes, retries,
                                     credits, extraction, valid_records, outcome, rule)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'status')`,
        [
          new Date(e.ts as number),
          e.site,
          route.country,
          route.pool,
          route.session,
          e.pageType,
          e.status,
          e.latencyMs,
          e.bytes,
          e.retries,
          e.credits,
          'ok',
          1,
          e.status === 200 ? 'ok' : 'hard_block',
        ],
      );
    }
  } finally {
    client.release();
  }
  return BASELINE_EVENTS / seconds(t);
}

/** Loads `perDay` events a day for 15 days up to `now` through the ingester (two writes in flight). */
async function loadSite(
  db: BenchDb,
  site: string,
  perDay: number,
  now: number,
  seed: number,
): Promise<{ events: number; rate: number }> {
  const ingester = createIngester(db.pool);
  const total = perDay * 15;
  const t = process.hrtime.bigint();
  let batch: Record<string, unknown>[] = [];
  const inFlight = new Set<Promise<unknown>>();
  for (const e of generateEvents({ site, from: now - 15 * DAY, to: now, count: total, seed })) {
    batch.push(e);
    if (batch.length === 10_000) {
      const p = ingester.ingest(batch).finally(() => inFlight.delete(p));
      inFlight.add(p);
      batch = [];
      if (inFlight.size >= 2) await Promise.race(inFlight);
    }
  }
  if (batch.length > 0) await ingester.ingest(batch);
  await Promise.all(inFlight);
  return { events: total, rate: total / seconds(t) };
}

/** The same answer computed from raw events: what the tick would cost without rollups. */
const RAW_READ_SQL = `
SELECT w, coalesce(country,'') || '|' || coalesce(pool,'') || '|' || coalesce(session,'') AS route_key,
  count(*) AS requests, count(*) FILTER (WHERE outcome = 'hard_block') AS hard_blocks,
  count(*) FILTER (WHERE outcome = 'challenge') AS challenges,
  count(*) FILTER (WHERE outcome = 'soft_block') AS soft_blocks,
  sum(valid_records) AS valid_records, sum(retries) AS retries, sum(bytes) AS bytes, sum(credits) AS credits
FROM (SELECT CASE WHEN ts >= $2 THEN 'current' ELSE 'baseline' END AS w, * FROM request_events
      WHERE site = $1 AND ((ts >= $2 AND ts < $3) OR (ts >= $4 AND ts < $5))) e
GROUP BY ROLLUP (w, route_key)`;
const RAW_P95_SQL = `
SELECT percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE ts >= $2) AS current_p95,
       percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE ts < $2) AS baseline_p95
FROM request_events WHERE site = $1 AND ((ts >= $2 AND ts < $3) OR (ts >= $4 AND ts < $5))`;

async function timeReads(db: BenchDb, site: string, now: number, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const asOf = new Date(now - (i % 60) * 60_000);
    const t = process.hrtime.bigint();
    await readSiteWindows(db.pool, site, { asOf, ...DEFAULT_WINDOW_SPEC });
    times.push(seconds(t) * 1000);
  }
  return median(times);
}

async function timeRawReads(db: BenchDb, site: string, now: number, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const asOf = now - i * 60_000;
    const currentFrom = new Date(asOf - DEFAULT_WINDOW_SPEC.currentWindowMs);
    const params = [site, currentFrom, new Date(asOf), new Date(asOf - 15 * DAY), new Date(asOf - DAY)];
    const t = process.hrtime.bigint();
    await db.pool.query(RAW_READ_SQL, params);
    await db.pool.query(RAW_P95_SQL, params);
    times.push(seconds(t) * 1000);
  }
  return median(times);
}

async function main(): Promise<void> {
  const db = await startBenchDb();
  const now = Date.now();
  try {
    process.stdout.write(
      `Signal store benchmark — embedded PostgreSQL (its shipped settings, stack/embedded-postgres.ts), ` +
        `${fmt(INGEST_EVENTS)} events per ingest run\n`,
    );
    const only = process.env.BENCH_ONLY;
    if (only !== 'read') {
      heading(
        'Ingest (validation, classification, raw rows, minute/hour/day rollups, norms; one transaction per batch)',
      );
      const naive = await benchOneInsertPerEvent(db, now);
      line('baseline: one INSERT per event (raw row only, no rollups)', `${fmt(naive)} events/s`);
      const mixes =
        (process.env.BENCH_MIX ?? 'both') === 'both'
          ? [MIXES.plain, MIXES.realistic]
          : [MIXES[process.env.BENCH_MIX as MixName]];
      if (mixes[0] === undefined)
        throw new Error(`BENCH_MIX: ${process.env.BENCH_MIX} must be plain, realistic or both`);
      const cpuText = (r: IngestRun) =>
        `CPU per event: Node ${fmt(r.nodeCpuUs, 1)} µs, PostgreSQL ${fmt(r.postgresCpuUs, 1)} µs (+ ` +
        `${fmt(r.maintenanceUs, 1)} µs vacuum after)`;
      const results: Partial<Record<MixName, { recorder: IngestRun; cli: IngestRun }>> = {};
      for (const mix of mixes) {
        const viaRecorder = await benchRecorder(db, now, mix);
        const viaCli = await benchCli(db, now, mix);
        results[mix.name] = { recorder: viaRecorder, cli: viaCli };
        process.stdout.write(`\n  mix "${mix.name}": ${mix.describe}\n`);
        line(
          'recorder library → inbox → drainer → store',
          `${fmt(viaRecorder.rate)} events/s   ${fmt(viaRecorder.rate / naive, 1)}× baseline`,
        );
        if (viaRecorder.slowestSecond !== undefined)
          line('  slowest ~1 s stretch of that run', `${fmt(viaRecorder.slowestSecond)} events/s`);
        line('  (event generation included; crawler and drainer in one process)', cpuText(viaRecorder));
        if (viaRecorder.inbox) {
          const { writeUs, drainUs, waitS, writeRate } = viaRecorder.inbox;
          line('  every event in the inbox (the crawler done) at', `${fmt(writeRate)} events/s`);
          line(
            '  busy time per event: inbox write (sink) / drain (store + delete)',
            `${fmt(writeUs, 1)} µs / ${fmt(drainUs, 1)} µs`,
          );
          line(
            '  inbox write → events stored, per batch (queueing under this bulk load)',
            `median ${fmt(waitS.p50, 2)} s, p99 ${fmt(waitS.p99, 2)} s, worst ${fmt(waitS.max, 2)} s`,
          );
        }
        if (viaRecorder.loopDelayMs)
          line(
            "  the crawler's event-loop delay while recording",
            `p99 ${fmt(viaRecorder.loopDelayMs.p99, 1)} ms, worst ${fmt(viaRecorder.loopDelayMs.max, 1)} ms`,
          );
        line(
          'target-health ingest <file> (NDJSON, separate process)',
          `${fmt(viaCli.rate)} events/s   ${fmt(viaCli.rate / naive, 1)}× baseline`,
        );
        line('', cpuText(viaCli));
      }
      const { plain, realistic } = results;
      if (plain && realistic) {
        process.stdout.write('\n');
        line('realistic / plain: recorder', fmt(realistic.recorder.rate / plain.recorder.rate, 2));
        line('realistic / plain: CLI', fmt(realistic.cli.rate / plain.cli.rate, 2));
      }
      line('(every run checked: each event in the raw table and in each rollup level)', '');
      const met = Object.values(results).every((r) => r.recorder.rate >= 100_000 && r.cli.rate >= 100_000);
      line('target: ≥ 100,000 events/s, both paths, every mix', met ? 'met' : 'NOT met');
    }
    if (only === 'ingest') return;

    heading('Tick read: current window (15 min) + baseline (14 days, most recent day excluded)');
    const sites: Array<[string, number]> = [
      ['small.example.com', 20_000],
      ['busy.example.com', 200_000],
      ...(process.env.BENCH_FULL === '1' ? ([['huge.example.com', 2_000_000]] as Array<[string, number]>) : []),
    ];
    const reads: Record<string, number> = {};
    for (const [site, perDay] of sites) {
      const loaded = await loadSite(db, site, perDay, now, 7);
      line(
        `loaded ${site}: 15 days × ${fmt(perDay)} events/day`,
        `${fmt(loaded.events)} events at ${fmt(loaded.rate)} events/s`,
      );
      await timeReads(db, site, now, 20); // warm-up
      reads[site] = await timeReads(db, site, now, 200);
    }
    const busy = reads['busy.example.com']!;
    // Give the raw computation its best chance: the index a raw-events design would have.
    await db.pool.query('CREATE INDEX request_events_site_ts ON request_events (site, ts)');
    await db.pool.query('ANALYZE request_events');
    const raw = await timeRawReads(db, 'busy.example.com', now, 5);
    line('busy (200,000/day): rollup read, median of 200', `${fmt(busy, 2)} ms`);
    line(
      'busy (200,000/day): same from raw events, median of 5',
      `${fmt(raw, 1)} ms   rollups ${fmt(raw / busy, 0)}× faster`,
    );
    line(
      'small (20,000/day): rollup read, median of 200',
      `${fmt(reads['small.example.com']!, 2)} ms   (busy/small = ${fmt(busy / reads['small.example.com']!, 2)} ` +
        `for 10× the volume)`,
    );
    if (reads['huge.example.com'] !== undefined) {
      line(
        'huge (2,000,000/day): rollup read, median of 200',
        `${fmt(reads['huge.example.com'], 2)} ms   (huge/busy = ${fmt(reads['huge.example.com'] / busy, 2)} ` +
          `for 10× the volume)`,
      );
    }
    line('targets: ≤ 10 ms median; ≥ 50× raw', busy <= 10 && raw / busy >= 50 ? 'met' : 'NOT met');
  } finally {
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
