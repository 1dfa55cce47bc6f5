/**
 * The crawler-side recorder under real PostgreSQL faults, on the fault project's own embedded PostgreSQL
 * (test/kit/fault-stack.ts: a persistent data folder, stopped and started again; nothing shared).
 * While crawlers record continuously:
 *   1. PostgreSQL is stopped for the outage and started again. Crawlers: in process without a spill
 *      (honouring backpressure, writing through the crawler's own pg Pool), in process with a spill, the
 *      README's snippet as written (a child process), and a child with a spill that is SIGKILLed during
 *      the outage and restarted on its directory afterwards;
 *   2. PostgreSQL is frozen (SIGSTOP on every server process) and thawed.
 * The crawlers' `postgresSink` writes to the event inbox; the server's drainer (server/api/inbox-drainer.ts, here in
 * the test's process on its own connections) runs through the faults too and stores the batches. Every
 * assertion is made from the store: each event a crawler recorded is stored exactly once (the crawler
 * numbers its events in `bytes`), and the recorders' stats agree. Figures are printed at the end.
 * Lengths: outage TH_FAULT_OUTAGE_SECONDS, else 300 s in the full form (TH_FAULTS_FULL=1, `npm run
 * test:faults`) and 20 s under `npm test`; freeze TH_FAULT_FREEZE_SECONDS, else 60 s full and 10 s.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { createRecorder, WriteTimeoutError, type Recorder, type RecorderStats } from '@target-health/crawler/recorder';
import { postgresSink } from '@target-health/crawler/postgres';
import type { RecorderLogger } from '@target-health/crawler/recorder/report';
import { startTestDrainer, type TestDrainer } from '../kit/inbox';
import { printFigures } from '../kit/fault-checks';
import { Child, FULL, startFaultDatabase, until, type FaultDatabase } from '../kit/fault-stack';
import { ROOT } from '../kit/processes';

function secondsFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name}: must be a number of seconds > 0 (got ${JSON.stringify(raw)})`);
  return value;
}

const OUTAGE_MS = secondsFromEnv('TH_FAULT_OUTAGE_SECONDS', FULL ? 300 : 20) * 1000;
const FREEZE_MS = secondsFromEnv('TH_FAULT_FREEZE_SECONDS', FULL ? 60 : 10) * 1000;
const BODY =
  `<!doctype html><html><head><title>Blue kettle – ` +
  `Shop</title></head><body><main>${'<p>A kettle that boils water.</p>'.repeat(30)}</main></body></html>`;
const suffix = Math.random().toString(36).slice(2, 8);
const siteOf = (name: string) => `${name}-${suffix}.example.com`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits for a condition (polling): true when it holds. */
const waitFor = (probe: () => boolean | Promise<boolean>, what: string, timeoutMs: number) =>
  until(async () => ((await probe()) ? true : undefined), what, timeoutMs, 100);

/** A logger that keeps its lines (the recorders' reports are part of what is checked). */
function keptLogger(): { logger: RecorderLogger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (_fields: Record<string, unknown>, message: string) =>
    void lines.push(`${level} ${message}`);
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

// ---- the database under test -------------------------------------------------------------------

let db: FaultDatabase;
/** The server's side: drains the inbox into the store, through every fault. */
let drainer: TestDrainer;
/** The crawlers' working folder: their scripts, spill directories, node_modules/@target-health/crawler. */
let work: string;
const databaseUrl = () => db.postgres.databaseUrl;

interface Stored {
  count: number;
  distinctIds: number;
  /** The crawler's sequence numbers, ascending. */
  seqs: number[];
}

/** What the store holds of a site; `drained`: once the inbox is empty (every batch written so far stored). */
async function storedFor(site: string, drained = true): Promise<Stored> {
  if (drained) await drainer.drained(120_000);
  const { rows } = await db.pool.query<{ bytes: string; event_id: string }>(
    'SELECT bytes, event_id FROM request_events WHERE site = $1 ORDER BY bytes',
    [site],
  );
  return {
    count: rows.length,
    distinctIds: new Set(rows.map((r) => r.event_id)).size,
    seqs: rows.map((r) => Number(r.bytes)),
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// ---- crawlers ----------------------------------------------------------------------------------

interface Crawler {
  readonly site: string;
  readonly sent: number;
  /** record() said "slow down" at least once. */
  readonly sawBackpressure: boolean;
  stop(): Promise<void>;
}

/** Records `perTick` events every 100 ms, numbered in `bytes`, awaiting drain() when told to slow down. */
function crawl(recorder: Recorder, site: string, perTick: number): Crawler {
  let stopped = false;
  let sent = 0;
  let sawBackpressure = false;
  const loop = (async () => {
    while (!stopped) {
      for (let k = 0; k < perTick && !stopped; k++) {
        const room = recorder.record({
          ts: Date.now(),
          site,
          pageType: 'product',
          status: 200,
          latencyMs: 120 + (sent % 50),
          bytes: sent,
          bodySample: BODY,
        });
        sent += 1;
        if (!room) {
          sawBackpressure = true;
          await recorder.drain();
        }
      }
      await sleep(100);
    }
  })();
  return {
    site,
    get sent() {
      return sent;
    },
    get sawBackpressure() {
      return sawBackpressure;
    },
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** Largest values seen in a recorder's stats, sampled every 250 ms. */
function sampleMax(recorder: () => RecorderStats): {
  max: { buffered: number; spilled: number; spillBytes: number };
  stop(): void;
} {
  const max = { buffered: 0, spilled: 0, spillBytes: 0 };
  const timer = setInterval(() => {
    const s = recorder();
    max.buffered = Math.max(max.buffered, s.buffered);
    max.spilled = Math.max(max.spilled, s.spilled);
    max.spillBytes = Math.max(max.spillBytes, s.spillBytes);
  }, 250);
  return { max, stop: () => clearInterval(timer) };
}

// ---- child processes: the README snippet, and a crawler that is killed -------------------------

/** The README's recorder snippet, cut at its comments into setup, request handler and shutdown. */
function readmeSnippet(): { setup: string; handler: string; shutdown: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('**From a Node crawler**');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (from < 0 || !block) throw new Error('README.md: the "From a Node crawler" section has no ```ts block');
  const lines = block[1]!.split('\n');
  const handlerAt = lines.findIndex((l) => l.startsWith('// in your request handler'));
  const shutdownAt = lines.findIndex((l) => l.startsWith('// on shutdown'));
  if (handlerAt < 0 || shutdownAt < handlerAt)
    throw new Error(
      'README.md: the recorder snippet lost its "// in your request handler" / "// on shutdown" comments',
    );
  return {
    setup: lines.slice(0, handlerAt).join('\n'),
    handler: lines.slice(handlerAt + 1, shutdownAt).join('\n'),
    shutdown: lines.slice(shutdownAt + 1).join('\n'),
  };
}

/** The snippet inside a crawler: requests come every 100 ms until "stop" arrives on stdin. */
function readmeCrawlerScript(): string {
  const { setup, handler, shutdown } = readmeSnippet();
  return `${setup}
const SITE = process.env.CRAWL_SITE;
const PER_TICK = Number(process.env.CRAWL_PER_TICK);
let sent = 0;
let stopping = false;
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { if (d.includes('stop')) stopping = true; });
async function requestHandler(request, response, latencyMs, bytes, html) {
${handler}
}
while (!stopping) {
  for (let k = 0; k < PER_TICK && !stopping; k++) {
    const url = 'https://' + SITE + '/p/' + sent;
    await requestHandler({ url }, { status: 200 }, 100, sent, ${JSON.stringify(BODY)});
    sent += 1;
  }
  await new Promise((r) => setTimeout(r, 100));
}
process.stdin.destroy();
${shutdown}
process.stdout.write(JSON.stringify({ sent, stats: recorder.stats() }) + '\\n');
`;
}

/**
 * A crawler with a spill (MODE=record: records and reports its stats; MODE=resume: sends what is in SPILL_DIR and
 * exits).
 */
const SPILL_CRAWLER = `
import { createRecorder } from '@target-health/crawler/recorder';
import { postgresSink } from '@target-health/crawler/postgres';
const recorder = createRecorder({
  sink: postgresSink({ connectionString: process.env.DATABASE_URL }),
  spillDir: process.env.SPILL_DIR,
  highWaterMark: 50,
  maxBuffered: 50,
  flushIntervalMs: 200,
  retryMaxDelayMs: 1000,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
if (process.env.MODE === 'record') {
  let sent = 0;
  setInterval(() => process.stdout.write(JSON.stringify({ sent, ...recorder.stats() }) + '\\n'), 200);
  for (;;) {
    for (let k = 0; k < 10; k++) {
      recorder.record({
        ts: Date.now(), site: process.env.CRAWL_SITE, pageType: 'product', status: 200, latencyMs: 90, bytes: sent,
        bodySample: ${JSON.stringify(BODY)},
      });
      sent += 1;
    }
    await sleep(100);
  }
} else {
  while (recorder.stats().spilled > 0) await sleep(100);
  await recorder.close();
  process.stdout.write(JSON.stringify(recorder.stats()) + '\\n');
}
`;

function startChild(script: string, env: Record<string, string>): Child {
  return new Child(
    spawn(process.execPath, [script], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
}

function lastJson<T>(text: string): T | undefined {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  return lines.length > 0 ? (JSON.parse(lines[lines.length - 1]!) as T) : undefined;
}

/** Complete lines of a spill directory's segments (a torn last line is left out). */
function spilledOnDisk(dir: string): Array<{ id: string; seq: number }> {
  const found: Array<{ id: string; seq: number }> = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ndjson'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      try {
        const { id, event } = JSON.parse(line) as { id: string; event: { bytes: number } };
        found.push({ id, seq: event.bytes });
      } catch {
        // torn or empty
      }
    }
  }
  return found;
}

// ---- the scenario ------------------------------------------------------------------------------

const children: Child[] = [];
const figures: Array<Record<string, string | number>> = [];

beforeAll(async () => {
  db = await startFaultDatabase('recorder');
  drainer = startTestDrainer(db.pool, { retryMaxMs: 2_000 });
  work = join(db.dir, 'crawlers');
  mkdirSync(work);
  chmodSync(work, 0o755);
  // The children import the package by name, as a crawler would: node_modules/@target-health/crawler → this
  // clone's packages/crawler (its built dist/; pg is found from there, in this clone's node_modules).
  mkdirSync(join(work, 'node_modules', '@target-health'), { recursive: true });
  symlinkSync(join(ROOT, 'packages', 'crawler'), join(work, 'node_modules', '@target-health', 'crawler'), 'dir');
  writeFileSync(join(work, 'readme-crawler.mjs'), readmeCrawlerScript());
  writeFileSync(join(work, 'spill-crawler.mjs'), SPILL_CRAWLER);
}, 300_000);

afterAll(async () => {
  for (const c of children) await c.kill('SIGKILL');
  await drainer?.close();
  await db?.close();
  printFigures(`recorder: PostgreSQL stopped ${OUTAGE_MS / 1000} s, frozen ${FREEZE_MS / 1000} s`, figures);
}, 120_000);

describe(`PostgreSQL stopped for ${OUTAGE_MS / 1000} s while crawlers record`, () => {
  const plain = keptLogger();
  const spilling = keptLogger();
  let ownPool: pg.Pool;
  let plainRecorder: Recorder;
  let spillRecorder: Recorder;
  let plainCrawler: Crawler;
  let spillCrawler: Crawler;
  let plainMax: ReturnType<typeof sampleMax>;
  let spillMax: ReturnType<typeof sampleMax>;
  let readme: Child;
  let killed: Child;
  let resumed: Child;
  let onDiskAtKill: Array<{ id: string; seq: number }>;
  let killedStats: { sent: number; stored: number; spilled: number };
  let outageMs = 0;
  const spillDir = () => join(work, 'spill-crawler');

  beforeAll(async () => {
    // Without a spill, on the crawler's own pg Pool (no 'error' listener of its own): backpressure holds the crawl.
    ownPool = new pg.Pool({ connectionString: databaseUrl() });
    plainRecorder = createRecorder({
      sink: postgresSink(ownPool, { logger: plain.logger }),
      highWaterMark: 1_000,
      logger: plain.logger,
    });
    // With a spill: memory holds 400 events, the rest of the outage goes to disk.
    spillRecorder = createRecorder({
      sink: postgresSink({ connectionString: databaseUrl(), logger: spilling.logger }),
      highWaterMark: 200,
      maxBuffered: 400,
      spillDir: join(work, 'spill-in-process'),
      logger: spilling.logger,
    });
    plainCrawler = crawl(plainRecorder, siteOf('plain'), 10);
    spillCrawler = crawl(spillRecorder, siteOf('spill'), 20);
    plainMax = sampleMax(() => plainRecorder.stats());
    spillMax = sampleMax(() => spillRecorder.stats());
    readme = startChild(join(work, 'readme-crawler.mjs'), {
      DATABASE_URL: databaseUrl(),
      CRAWL_SITE: siteOf('readme'),
      CRAWL_PER_TICK: '10',
    });
    killed = startChild(join(work, 'spill-crawler.mjs'), {
      DATABASE_URL: databaseUrl(),
      CRAWL_SITE: siteOf('killed'),
      SPILL_DIR: spillDir(),
      MODE: 'record',
    });
    children.push(readme, killed);
    const killedNow = () => lastJson<{ sent: number; stored: number; spilled: number }>(killed.stdout);

    // Everyone is storing before the fault.
    await waitFor(
      async () =>
        plainRecorder.stats().stored > 0 &&
        spillRecorder.stats().stored > 0 &&
        (killedNow()?.stored ?? 0) > 0 &&
        (await storedFor(siteOf('readme'), false)).count > 0,
      'every crawler storing',
      120_000,
    );

    await db.postgres.stop();
    const outageStarted = Date.now();
    // Mid-outage, with events on its disk, the spilling child dies without closing anything.
    await waitFor(
      () => Date.now() - outageStarted >= OUTAGE_MS / 2 && (killedNow()?.spilled ?? 0) >= 50,
      'the child to spill',
      OUTAGE_MS + 60_000,
    );
    killedStats = killedNow()!;
    await killed.kill('SIGKILL');
    onDiskAtKill = spilledOnDisk(spillDir());
    // The rest of the outage (its length is the fault, not a wait for the system).
    await sleep(Math.max(0, outageStarted + OUTAGE_MS - Date.now()));
    outageMs = Date.now() - outageStarted;
    await db.postgres.start();

    resumed = startChild(join(work, 'spill-crawler.mjs'), {
      DATABASE_URL: databaseUrl(),
      SPILL_DIR: spillDir(),
      MODE: 'resume',
    });
    children.push(resumed);
    // Caught up: memory and disk empty again.
    await waitFor(
      () =>
        spillRecorder.stats().spilled === 0 &&
        spillRecorder.stats().buffered < 400 &&
        plainRecorder.stats().buffered < 1_000,
      'the recorders to catch up',
      300_000,
    );
    await Promise.all([plainCrawler.stop(), spillCrawler.stop()]);
    await Promise.all([plainRecorder.close(), spillRecorder.close()]);
    plainMax.stop();
    spillMax.stop();
    await ownPool.end();
    readme.proc.stdin!.end('stop\n');
    await Promise.all([readme.exited, resumed.exited]);
  }, OUTAGE_MS + 600_000);

  test(
    'in process, without a spill: ' + 'backpressure held the crawl, every event recorded was stored exactly once',
    async () => {
      const s = plainRecorder.stats();
      const stored = await storedFor(plainCrawler.site);
      figures.push({
        crawler: 'in process, no spill',
        'down s': (outageMs / 1000).toFixed(1),
        sent: plainCrawler.sent,
        stored: stored.count,
        lost: plainCrawler.sent - stored.count,
        'max buffered': plainMax.max.buffered,
        'max spilled': '-',
      });
      expect(plainCrawler.sawBackpressure).toBe(true);
      expect(s).toMatchObject({
        recorded: plainCrawler.sent,
        dropped: 0,
        failed: 0,
        rejected: 0,
        buffered: 0,
        spilled: 0,
      });
      expect(s.stored + s.duplicates).toBe(plainCrawler.sent);
      expect(stored.seqs).toEqual(range(plainCrawler.sent));
      expect(stored.distinctIds).toBe(plainCrawler.sent);
      // Memory stayed bounded (maxBuffered = 2 × highWaterMark).
      expect(plainMax.max.buffered).toBeLessThanOrEqual(2_000);
      // The outage was reported, and its end.
      expect(plain.lines.some((l) => l.startsWith('warn recorder: cannot write events'))).toBe(true);
      expect(plain.lines.some((l) => l.startsWith('info recorder: writes succeed again after'))).toBe(true);
    },
  );

  test('in process, with a spill: the outage went to disk, every event recorded was stored exactly once', async () => {
    const s = spillRecorder.stats();
    const stored = await storedFor(spillCrawler.site);
    figures.push({
      crawler: 'in process, spill',
      'down s': (outageMs / 1000).toFixed(1),
      sent: spillCrawler.sent,
      stored: stored.count,
      lost: spillCrawler.sent - stored.count,
      'max buffered': spillMax.max.buffered,
      'max spilled': `${spillMax.max.spilled} (${(spillMax.max.spillBytes / 1e6).toFixed(1)} MB)`,
    });
    expect(spillMax.max.spilled).toBeGreaterThan(0);
    expect(spillMax.max.buffered).toBeLessThanOrEqual(400);
    expect(s).toMatchObject({
      recorded: spillCrawler.sent,
      dropped: 0,
      failed: 0,
      rejected: 0,
      buffered: 0,
      spilled: 0,
      spillBytes: 0,
    });
    expect(s.stored + s.duplicates).toBe(spillCrawler.sent);
    expect(stored.seqs).toEqual(range(spillCrawler.sent));
    expect(stored.distinctIds).toBe(spillCrawler.sent);
    expect(readdirSync(join(work, 'spill-in-process'))).toEqual([]);
    expect(spilling.lines.some((l) => l.startsWith('warn recorder: memory full; keeping further events on disk'))).toBe(
      true,
    );
  });

  test(
    "the README's snippet, as written, " + 'survives the restart (no crash) and stores every event exactly once',
    async () => {
      const { code, signal } = await readme.exited;
      const result = lastJson<{ sent: number; stats: RecorderStats }>(readme.stdout);
      const stored = await storedFor(siteOf('readme'));
      figures.push({
        crawler: 'README snippet (child)',
        'down s': (outageMs / 1000).toFixed(1),
        sent: result?.sent ?? '?',
        stored: stored.count,
        lost: (result?.sent ?? 0) - stored.count,
        'max buffered': '-',
        'max spilled': '-',
      });
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      // Its output is JSON lines (its stats, pino's log lines on stderr): no stack trace of an unhandled error.
      expect(readme.output.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))).toEqual([]);
      expect(readme.output).toMatch(/cannot write events/);
      expect(result!.stats).toMatchObject({ recorded: result!.sent, dropped: 0, failed: 0, buffered: 0, spilled: 0 });
      expect(stored.seqs).toEqual(range(result!.sent));
    },
  );

  test(
    'a crawler killed mid-outage: a recorder restarted on its spill directory sends everything that was on disk, ' +
      'once',
    async () => {
      const { code } = await resumed.exited;
      const stats = lastJson<RecorderStats>(resumed.stdout);
      const stored = await storedFor(siteOf('killed'));
      figures.push({
        crawler: 'child SIGKILLed, restarted',
        'down s': (outageMs / 1000).toFixed(1),
        sent: `${killedStats.sent} (${killedStats.stored} stored before the kill)`,
        stored: stored.count,
        lost: `${killedStats.sent - stored.count} (in its memory at the kill)`,
        'max buffered': '-',
        'max spilled': `${onDiskAtKill.length} on disk at the kill, ${stats?.recovered ?? '?'} recovered`,
      });
      expect(code).toBe(0);
      expect(onDiskAtKill.length).toBeGreaterThanOrEqual(50);
      const seqs = new Set(stored.seqs);
      expect(onDiskAtKill.filter((e) => !seqs.has(e.seq))).toEqual([]);
      // Nothing stored twice, and what was acknowledged before the kill is there.
      expect(stored.distinctIds).toBe(stored.count);
      expect(seqs.size).toBe(stored.count);
      expect(stored.count).toBeGreaterThanOrEqual(killedStats.stored);
      // Only a line torn by the kill may be unreadable.
      expect(stats!.recovered - onDiskAtKill.length).toBeLessThanOrEqual(1);
      expect(stats).toMatchObject({ failed: stats!.recovered - onDiskAtKill.length, spilled: 0 });
      expect(stats!.stored + stats!.duplicates).toBe(onDiskAtKill.length);
      expect(readdirSync(spillDir())).toEqual([]);
    },
  );
});

test(
  `PostgreSQL frozen (SIGSTOP) for ${FREEZE_MS / 1000} s: writes time out and are retried, nothing is lost`,
  async () => {
    const { logger, lines } = keptLogger();
    const errors: unknown[] = [];
    const closedLate = () => lines.some((l) => l.includes('still busy'));
    const recorder = createRecorder({
      sink: postgresSink({ connectionString: databaseUrl(), connectionTimeoutMs: 2_000, logger }),
      writeTimeoutMs: 3_000,
      retryMaxDelayMs: 1_000,
      flushIntervalMs: 200,
      logger,
      onError: (err) => errors.push(err),
    });
    const crawler = crawl(recorder, siteOf('frozen'), 10);
    const max = sampleMax(() => recorder.stats());
    await waitFor(() => recorder.stats().stored > 0, 'the recorder storing', 60_000);
    const frozenAt = Date.now();
    try {
      db.postgres.freeze();
      await sleep(FREEZE_MS);
    } finally {
      db.postgres.thaw();
    }
    const frozeFor = Date.now() - frozenAt;
    await waitFor(() => recorder.stats().buffered < 100, 'the recorder to catch up', 180_000);
    await crawler.stop();
    await recorder.close();
    max.stop();
    const s = recorder.stats();
    const stored = await storedFor(crawler.site);
    figures.push({
      crawler: `in process, frozen server (${errors.length} failed attempts)`,
      'down s': (frozeFor / 1000).toFixed(1),
      sent: crawler.sent,
      stored: stored.count,
      lost: crawler.sent - stored.count,
      'max buffered': max.max.buffered,
      'max spilled': '-',
    });
    // Every connection came back after the thaw: close() ended the sink's pool without giving up on one.
    expect(closedLate()).toBe(false);
    // The freeze showed as errors (a write timeout, or no connection in time), not as a hang.
    expect(errors.some((e) => e instanceof WriteTimeoutError || /timeout/i.test(String((e as Error).message)))).toBe(
      true,
    );
    expect(s).toMatchObject({ recorded: crawler.sent, dropped: 0, failed: 0, buffered: 0 });
    expect(stored.seqs).toEqual(range(crawler.sent));
    expect(stored.distinctIds).toBe(crawler.sent);
  },
  FREEZE_MS + 300_000,
);
