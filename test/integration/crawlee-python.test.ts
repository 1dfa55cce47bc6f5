/**
 * The crawlee-python integration (`target_health.crawlee`, packages/python) with real crawlee-python
 * crawls — the newest (1.11) and the oldest supported (1.10.1) — against the real API and PostgreSQL. The
 * package runs as a user installs it: the built wheel (python -m build), never the source tree. The crawl
 * (packages/python/tests/crawlee/crawl/th_crawl.py, a ParselCrawler set up as the docs show) goes
 * through a forward proxy with a labelled user name to the test site, which answers for any host and
 * counts hits and requests in flight per host. Controls are written by the product's own writer and reach
 * the crawler over the SSE stream:
 * - throttle-…: concurrencyLimit 2 → never more than 2 requests in flight at the site (free-… shows more);
 * - pause-…: paused + canaryOnly before the crawl → no production request reaches the site, canaries do;
 *   the crawl waits (not finished, nothing failed) until the resume, then crawls the held requests;
 * - stop-…: band stopped → none of its requests is sent.
 * Then every attempt is stored: the 403 challenge with its body (Crawlee turns it into a SessionError and
 * never shows it to the request handler), each retry of a reset connection.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePythonVenv, type PythonVenv } from '../../stack/python-venv';
import { startTestApi, type TestApi } from '../kit/api';
import { changeControls as change } from '../kit/controls';
import {
  installPythonPackage,
  progress,
  PYTHON_PKG as PKG,
  scrapyVenv,
  type InstalledPythonPackage,
} from '../kit/scrapy';
import { eventually, openHarness, type TestHarness } from '../kit/services';
import { CHALLENGE_BODY, startTestProxy, startTestSite, type TestProxy, type TestSite } from './crawlee-site';

type Edition = 'newest' | 'oldest';
const REQUIREMENTS: Record<Edition, string> = {
  newest: 'requirements-crawlee.txt',
  oldest: 'requirements-crawlee-oldest.txt',
};
const crawleeVersion = (edition: Edition): string =>
  /^crawlee(?:\[[^\]]*\])?==(\S+)/m.exec(readFileSync(join(PKG, REQUIREMENTS[edition]), 'utf8'))![1]!;

/**
 * The Python processes' environment. crawlee-python's Configuration reads LOG_LEVEL too and refuses the
 * test runner's pino level (WARN is not one of its names).
 */
const pythonEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  PYTHONDONTWRITEBYTECODE: '1',
  LOG_LEVEL: 'INFO',
  ...extra,
});

let h: TestHarness;
let api: TestApi;
let venvs: Record<Edition, PythonVenv>;
let installed: InstalledPythonPackage;
let site: TestSite;
let proxy: TestProxy;

beforeAll(async () => {
  // First run on a machine: builds the venvs (~15 s each for crawlee); afterwards reused at once.
  venvs = {
    newest: await ensurePythonVenv(join(PKG, REQUIREMENTS.newest), progress),
    oldest: await ensurePythonVenv(join(PKG, REQUIREMENTS.oldest), progress),
  };
  process.stderr.write(`[crawlee-python] venvs: crawlee ${crawleeVersion('newest')} and ${crawleeVersion('oldest')}\n`);
  installed = await installPythonPackage(await scrapyVenv('newest'));
  h = await openHarness();
  api = await startTestApi(h);
  site = await startTestSite();
  proxy = await startTestProxy(site.port);
}, 600_000);
afterAll(async () => {
  await proxy?.close();
  await site?.close();
  await api?.close();
  await h?.close();
  installed?.remove();
});

test(
  "the integration's own pytest suite passes on the newest " + "crawlee (the request manager's gate, the attempts)",
  () => {
    const r = spawnSync(venvs.newest.python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/crawlee'], {
      cwd: PKG,
      env: pythonEnv(),
      encoding: 'utf8',
      timeout: 300_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    expect(out).toMatch(/\b\d+ passed\b/);
    expect(out).not.toMatch(/failed|error/i);
    expect(r.status).toBe(0);
  },
);

test.each(['newest', 'oldest'] as const)(
  'crawlee %s: every attempt recorded (a challenge with its body), throttled, paused before the crawl ' +
    '(canaries pass) until resumed, stopped',
  async (edition) => {
    const started = Date.now();
    const id = randomUUID().slice(0, 8);
    const free = `free-${id}.example.com`;
    const throttled = `throttle-${id}.example.com`;
    const paused = `pause-${id}.example.com`;
    const stopped = `stop-${id}.example.com`;
    await change(h.pool, free, {});
    await change(h.pool, throttled, { concurrencyLimit: 2, band: 'degrading', reason: 'test: throttle' });
    await change(h.pool, paused, { paused: true, canaryOnly: true, band: 'resisting', reason: 'test: pause' });
    await change(h.pool, stopped, { band: 'stopped', reason: 'test: stop' });
    const pages = (n: number, prefix: string, kind = 'page') =>
      Array.from({ length: n }, (_, i) => [`${prefix}${i}?delay=150`, kind]);
    const plan = {
      [free]: pages(10, '/ok/'),
      [throttled]: [...pages(10, '/ok/'), ['/challenge/1', 'page'], ['/reset/1', 'page']],
      [paused]: [...pages(6, '/ok/'), ...pages(2, '/ok/canary-', 'canary')],
      [stopped]: pages(4, '/ok/'),
    };
    const token = await api.token(['ingest', 'read']);
    const scratch = mkdtempSync(join(tmpdir(), 'th-crawlee-py-'));
    let output = '';
    const child = spawn(venvs[edition].python, [join(PKG, 'tests', 'crawlee', 'crawl', 'th_crawl.py')], {
      cwd: scratch,
      env: pythonEnv({
        PYTHONPATH: installed.site,
        TH_API: api.url,
        TH_TOKEN: token,
        TH_PROXY: proxy.url('residential-de'),
        TH_PLAN: JSON.stringify(plan),
        CRAWLEE_STORAGE_DIR: join(scratch, 'storage'),
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const hits = (host: string) => site.counts(host).hits;
    const until = async (cond: () => boolean, what: string, ms: number): Promise<void> => {
      try {
        await eventually(() => Promise.resolve(cond() ? true : undefined), what, ms);
      } catch (err) {
        const counts = { free: hits(free), throttled: hits(throttled), paused: hits(paused), stopped: hits(stopped) };
        throw new Error(
          `${(err as Error).message}; hits ${JSON.stringify(counts)}; crawl output:\n${output.slice(-6000)}`,
        );
      }
    };
    let resumedAt = 0;
    try {
      // Crawlee's own attempts: the challenge once (max_session_rotations=1 fails it at the first block), the reset
      // twice (one retry).
      await until(
        () => hits(free) === 10 && hits(throttled) === 13 && hits(paused) === 2,
        'the unpaused requests and the canaries to be served',
        90_000,
      );
      // Give a held request every chance to slip out: the crawl idles, it does not finish.
      await new Promise((r) => setTimeout(r, 1_500));
      expect({ paused: hits(paused), stopped: hits(stopped), exited: child.exitCode }).toEqual({
        paused: 2,
        stopped: 0,
        exited: null,
      });
      expect(site.counts(throttled).maxInFlight).toBeLessThanOrEqual(2);
      expect(site.counts(throttled).maxInFlight).toBe(2);
      expect(site.counts(free).maxInFlight).toBeGreaterThan(2);

      resumedAt = Date.now();
      await change(h.pool, paused, { paused: false, canaryOnly: false, band: 'healthy', reason: 'test: resume' });
      const code = await Promise.race([
        exited,
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000).unref()),
      ]);
      expect({ code, output: code === 0 ? '' : output.slice(-6000) }).toEqual({ code: 0, output: '' });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(scratch, { recursive: true, force: true });
    }
    process.stderr.write(
      `[crawlee-python] crawlee ${crawleeVersion(edition)}: crawl ${Date.now() - started} ms (resumed after ` +
        `${resumedAt - started} ms)\n`,
    );
    expect(hits(paused)).toBe(8);
    expect(hits(stopped)).toBe(0);
    // Crawlee logs a traceback for each request that failed after its retries (the challenge, the reset);
    // none may come from the integration, nor a sending problem.
    expect(output).not.toMatch(
      /target_health\/[\w/]+\.py|refused:|target-health: .*(failed|unreachable|not delivered|gave up)/,
    );
    const final = JSON.parse(output.split('\n').find((l) => l.startsWith('{"final": true'))!) as {
      counts: Record<string, number>;
      handled: number;
      failed: number;
    };
    const attempts = 10 + 13 + 8;
    expect(final.counts).toMatchObject({
      events_recorded: attempts,
      events_sent: attempts,
      events_rejected: 0,
      events_dropped: 0,
      requests_dropped_stopped: 4,
    });
    expect(final.counts.requests_released).toBeGreaterThanOrEqual(6);
    // The challenge and the reset failed after their retries; every other page reached the handler.
    expect({ handled: final.handled, failed: final.failed }).toEqual({ handled: 10 + 10 + 8, failed: 2 });

    const rows = await h.pool.query<{
      site: string;
      status: number | null;
      network_error: string | null;
      outcome: string;
      canary: boolean;
      retries: number | null;
      valid_records: number | null;
      bytes: string | null;
      pool: string | null;
      country: string | null;
      n: string;
    }>(
      `SELECT site, status, network_error, outcome, canary, retries, valid_records, bytes::text, pool, country,
              count(*)::text AS n
       FROM request_events WHERE site LIKE $1 AND event_id LIKE 'crawlee-py-%'
       GROUP BY 1,2,3,4,5,6,7,8,9,10 ORDER BY 1,2,3,6`,
      [`%-${id}.example.com`],
    );
    const table = rows.rows.map((r) => ({ ...r, n: Number(r.n), bytes: r.status === 200 ? 'page' : r.bytes }));
    const route = { pool: 'residential', country: 'DE' };
    const ok = {
      status: 200,
      network_error: null,
      outcome: 'ok',
      retries: null,
      valid_records: 1,
      bytes: 'page',
      ...route,
    };
    expect(table).toEqual([
      { site: free, ...ok, canary: false, n: 10 },
      { site: paused, ...ok, canary: false, n: 6 },
      { site: paused, ...ok, canary: true, n: 2 },
      // The challenge's body reached the classifier (its bytes are the page's): a challenge.
      { site: throttled, ...ok, canary: false, n: 10 },
      {
        site: throttled,
        status: 403,
        network_error: null,
        outcome: 'challenge',
        canary: false,
        retries: null,
        valid_records: null,
        bytes: String(Buffer.byteLength(CHALLENGE_BODY)),
        ...route,
        n: 1,
      },
      // The reset's retry first: PostgreSQL sorts a NULL retries last.
      {
        site: throttled,
        status: null,
        network_error: 'connection_reset',
        outcome: 'hard_block',
        canary: false,
        retries: 1,
        valid_records: null,
        bytes: null,
        ...route,
        n: 1,
      },
      {
        site: throttled,
        status: null,
        network_error: 'connection_reset',
        outcome: 'hard_block',
        canary: false,
        retries: null,
        valid_records: null,
        bytes: null,
        ...route,
        n: 1,
      },
    ]);
  },
  240_000,
);
