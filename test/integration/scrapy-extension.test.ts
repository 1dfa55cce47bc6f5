/**
 * The Scrapy extension (packages/python, `target_health.scrapy`) with a real Scrapy 2.19 crawl against the real API
 * and PostgreSQL. The Python venv is provisioned in the per-machine cache on first use (stack/python-venv.ts).
 *
 * The crawl goes through a local forward proxy that also plays the sites (a node:http server keeping an
 * access log and the requests in flight per site), so no DNS is needed and the route comes from the
 * proxy's username (`residential-de`). Controls are written by the product's own writer
 * (server/db/controls.ts), as the action activity writes them, and reach the crawler over the SSE stream:
 * - throttle-…: concurrencyLimit 1 → never more than one request in flight at the server (free-…, at
 *   nominal controls, shows the server does see concurrency);
 * - pause-…: paused + canaryOnly → no production request reaches the server, canaries do; a resume
 *   brings the held requests (never dropped) back;
 * - stop-…: band stopped → dropped and counted in Scrapy's stats, none reaches the server.
 * Then every attempt is in the store, classified (the challenge page by its body and headers).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PythonVenv } from '../../stack/python-venv';
import { startTestApi, type TestApi } from '../kit/api';
import { ROOT } from '../kit/processes';
import {
  installPythonPackage,
  PYTHON_PKG as PKG,
  SCRAPY_TESTS,
  scrapyVenv,
  scrapyVersion,
  type InstalledPythonPackage,
  type ScrapyEdition,
} from '../kit/scrapy';
import { eventually, openHarness, type TestHarness } from '../kit/services';
import { changeControls as change } from '../kit/controls';

interface Hit {
  host: string;
  path: string;
  proxyUser: string;
  /** Date.now() when the request arrived. */
  at: number;
}

const PRODUCT = (n: string) =>
  `<!DOCTYPE html><html><head><title>Product ${n}</title></head><body><h1>Product ${n}</h1><p ` +
  `class="price">12.50</p></body></html>`;
const CHALLENGE =
  '<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head><body><div ' +
  'id="challenge-running">Checking your browser</div>' +
  '<script>window._cf_chl_opt={cvId:"3",cType:"managed"};</script></body></html>';

/** A forward proxy on loopback that serves the sites itself, logging each request and the requests in flight. */
class SiteProxy {
  readonly hits: Hit[] = [];
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  private server: Server = createServer((req, res) => this.handle(req, res));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  count(host: string, pathPrefix = ''): number {
    return this.hits.filter((h) => h.host === host && h.path.startsWith(pathPrefix)).length;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    // A proxy receives the absolute form: GET http://shop.example.com/p/1
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'unknown'}`);
    const auth = req.headers['proxy-authorization'] ?? '';
    const proxyUser = auth.startsWith('Basic ')
      ? (Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':')[0] ?? '')
      : '';
    const host = url.hostname;
    this.hits.push({ host, path: url.pathname, proxyUser, at: Date.now() });
    if (url.pathname.startsWith('/reset')) {
      req.socket.destroy();
      return;
    }
    const now = (this.inFlight.get(host) ?? 0) + 1;
    this.inFlight.set(host, now);
    this.maxInFlight.set(host, Math.max(now, this.maxInFlight.get(host) ?? 0));
    // Slow enough (80 ms) that a crawler allowed several requests at once does have several in flight.
    setTimeout(() => {
      this.inFlight.set(host, (this.inFlight.get(host) ?? 1) - 1);
      if (url.pathname.startsWith('/challenge')) {
        res
          .writeHead(403, {
            'content-type': 'text/html; charset=UTF-8',
            server: 'cloudflare',
            'cf-mitigated': 'challenge',
          })
          .end(CHALLENGE);
      } else {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PRODUCT(url.pathname));
      }
    }, 80);
  }
}

let h: TestHarness;
let api: TestApi;
let venv: PythonVenv;
let venvs: Record<ScrapyEdition, PythonVenv>;
let installed: InstalledPythonPackage;
let proxy: SiteProxy;
let proxyAddress: string;

beforeAll(async () => {
  // First run on a machine: builds the venvs (the newest Scrapy with pytest and the build tools, the
  // oldest Scrapy supported), ~30 s each; afterwards reused at once.
  venvs = { newest: await scrapyVenv('newest'), oldest: await scrapyVenv('oldest') };
  venv = venvs.newest;
  // Every crawl below runs the package as a user installs it: the built wheel, not the source tree.
  installed = await installPythonPackage(venv);
  h = await openHarness();
  api = await startTestApi(h);
  proxy = new SiteProxy();
  proxyAddress = await proxy.listen();
}, 600_000);
afterAll(async () => {
  await proxy?.close();
  await api?.close();
  await h?.close();
  installed?.remove();
});

function python(args: string[], env: Record<string, string> = {}, cwd = PKG): { status: number | null; out: string } {
  const r = spawnSync(venv.python, args, {
    cwd,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test(
  "the package's own pytest suite passes (event building, " + 'error mapping, routes, SSE, controls, sender, follower)',
  () => {
    // The core's and the Scrapy extension's tests (tests/crawlee runs in a crawlee venv: crawlee-python.test.ts).
    const r = python(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests/core', 'tests/scrapy']);
    expect(r.out).toMatch(/\b\d+ passed\b/);
    expect(r.out).not.toMatch(/failed|error/i);
    expect(r.status).toBe(0);
  },
);

test('the Python is as ruff format lays it out, and no line of it passes 120 columns', () => {
  // ruff is in the newest Scrapy's venv; its settings are the package's pyproject.toml ([tool.ruff]) and,
  // for the benchmark's spider, the repository's ruff.toml. --no-cache: nothing is written into the checkout.
  // A failing expectation prints ruff's output: the files to format, the lines too long.
  const ruff = (...command: string[]) =>
    python(['-m', 'ruff', ...command, '--no-cache', 'packages/python', 'dev/bench/scrapy'], {}, ROOT);
  const format = ruff('format', '--check');
  expect(format.out).not.toMatch(/would reformat|error/i);
  expect(format.out).toMatch(/\b\d+ files already formatted\b/);
  expect(format.status).toBe(0);
  const width = ruff('check', '--select', 'E501');
  expect(width.out).toMatch(/^All checks passed!$/m);
  expect(width.status).toBe(0);
});

/** Every file under a folder with its size and modification time (what a build must leave as it was). */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const path = join(e.parentPath, e.name);
      const st = statSync(path);
      return `${path.slice(dir.length)} ${st.size} ${st.mtimeMs}`;
    })
    .sort();
}

test(
  'python -m build makes a wheel and an sdist of the package version, writes nothing into the checkout; the ' +
    'wheel installs and imports',
  async () => {
    const before = tree(PKG);
    const built = await installPythonPackage(venv);
    try {
      expect(tree(PKG)).toEqual(before);
      const version = /^__version__ = "([^"]+)"$/m.exec(
        readFileSync(join(PKG, 'src', 'target_health', '__init__.py'), 'utf8'),
      )![1]!;
      // The crawler packages move together: the wheel carries the npm crawler package's version (and the server's).
      const npmVersion = (path: string) =>
        (JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { version: string }).version;
      expect({ wheel: version, server: version }).toEqual({
        wheel: npmVersion('packages/crawler/package.json'),
        server: npmVersion('package.json'),
      });
      expect(built.wheel.endsWith(`target_health-${version}-py3-none-any.whl`)).toBe(true);
      expect(built.sdist.endsWith(`target_health-${version}.tar.gz`)).toBe(true);
      // The sdist holds the code and its documents, no tests.
      const listing = spawnSync('tar', ['tzf', built.sdist], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/^[^/]+\//, ''));
      expect(listing).toEqual(
        expect.arrayContaining([
          'README.md',
          'LICENSE',
          'CHANGELOG.md',
          'pyproject.toml',
          'PKG-INFO',
          'src/target_health/__init__.py',
          'src/target_health/events.py',
          'src/target_health/scrapy/middleware.py',
          'src/target_health/crawlee/__init__.py',
        ]),
      );
      expect(listing.filter((f) => f.startsWith('tests/') || f.includes('requirements'))).toEqual([]);
      const probe = python(
        [
          '-c',
          'import target_health, target_health.scrapy as t; print(t.__file__); print(target_health.__version__); ' +
            'print(",".join(sorted(t.__all__)))',
        ],
        { PYTHONPATH: built.site },
        built.site,
      );
      expect(probe.status).toBe(0);
      expect(probe.out).toContain(join(built.site, 'target_health', 'scrapy', '__init__.py'));
      expect(probe.out).toContain(`\n${version}\n`);
      expect(probe.out).toContain(
        'TargetHealthDownloaderMiddleware,TargetHealthExtension,TargetHealthSpiderMiddleware,controls_c' +
          'hanged,extraction',
      );
    } finally {
      built.remove();
    }
  },
);

test(
  'a real Scrapy crawl records every attempt and obeys the controls: throttled, paused (canaries pass), resumed, ' +
    'stopped',
  async () => {
    const id = randomUUID().slice(0, 8);
    const free = `free-${id}.example.com`;
    const throttled = `throttle-${id}.example.com`;
    const paused = `pause-${id}.example.com`;
    const stopped = `stop-${id}.example.com`;
    await change(h.pool, free, {});
    await change(h.pool, throttled, { concurrencyLimit: 1, band: 'degrading', reason: 'test: throttle' });
    await change(h.pool, paused, { paused: true, canaryOnly: true, band: 'resisting', reason: 'test: pause' });
    await change(h.pool, stopped, { band: 'stopped', reason: 'test: stop' });

    const pages = (n: number, prefix = '/p/') => Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'page']);
    const plan = {
      [free]: pages(12),
      [throttled]: [...pages(12), ...pages(3, '/challenge/'), ['/reset', 'page']],
      [paused]: [...pages(8), ...pages(3, '/canary/').map(([p]) => [p, 'canary'])],
      [stopped]: pages(4),
    };
    const token = await api.token(['ingest', 'read']);
    const scratch = mkdtempSync(join(tmpdir(), 'th-scrapy-crawl-'));
    const statsFile = join(scratch, 'stats.json');
    let output = '';
    const child: ChildProcess = spawn(
      venv.python,
      ['-m', 'scrapy', 'runspider', join(SCRAPY_TESTS, 'crawl', 'health_spider.py')],
      {
        cwd: scratch,
        env: {
          ...process.env,
          PYTHONPATH: installed.site,
          PYTHONDONTWRITEBYTECODE: '1',
          TH_API_URL: api.url,
          TH_TOKEN: token,
          TH_PROXY: proxyAddress,
          TH_PLAN: JSON.stringify(plan),
          TH_STATS_FILE: statsFile,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let closingAt: number | undefined;
    child.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString('utf8');
      if (closingAt === undefined && output.includes('Closing spider (finished)')) closingAt = Date.now();
    });
    const exited = new Promise<number>((resolve) => child.on('close', () => resolve(Date.now())));
    // A wait that fails shows what Scrapy said.
    const until = async (cond: () => boolean, what: string, ms: number): Promise<void> => {
      try {
        await eventually(() => Promise.resolve(cond() ? true : undefined), what, ms);
      } catch (err) {
        throw new Error(
          `${(err as Error).message}; server hits: ` +
            `${JSON.stringify(proxy.hits.map((x) => `${x.host}${x.path}`))}; Scrapy output:\n${output.slice(-6000)}`,
        );
      }
    };
    try {
      // Everything not held has been served: the free and throttled sites and the paused site's canaries.
      // (The reset page: Scrapy's three attempts, each of which Twisted may try twice on a kept-alive
      // connection, so the server sees it 3-6 times; the events below count Scrapy's attempts.)
      await until(
        () =>
          proxy.count(free) === 12 &&
          proxy.count(throttled, '/p/') === 12 &&
          proxy.count(throttled, '/challenge/') === 3 &&
          proxy.count(throttled, '/reset') >= 3 &&
          proxy.count(paused, '/canary/') === 3,
        'the unpaused requests to be served',
        90_000,
      );
      // Paused: not one production request reached the site; stopped: nothing at all.
      expect(proxy.count(paused, '/p/')).toBe(0);
      expect(proxy.count(stopped)).toBe(0);
      expect(proxy.maxInFlight.get(throttled)).toBe(1);
      expect(proxy.maxInFlight.get(free)).toBeGreaterThan(1);

      // Resume: the held requests go out now.
      await change(h.pool, paused, { paused: false, canaryOnly: false, band: 'healthy', reason: 'test: resume' });
      await until(
        () => proxy.count(paused, '/p/') === 8,
        'the held requests to reach the site after the resume',
        60_000,
      );
      const exitedAt = await exited;
      expect(child.exitCode).toBe(0);
      // "Closing spider" to the process's end: the extension's close (the last events sent, the controls
      // stream closed) adds no wait of its own (it waited out a 2 s thread join before).
      const closeMs = exitedAt - closingAt!;
      process.stderr.write(`[scrapy] "Closing spider (finished)" to exit: ${closeMs} ms\n`);
      expect(closeMs).toBeLessThan(2_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }

    expect(proxy.count(stopped)).toBe(0);
    expect(new Set(proxy.hits.filter((x) => x.host.endsWith(`-${id}.example.com`)).map((x) => x.proxyUser))).toEqual(
      new Set(['residential-de']),
    );

    // Scrapy's own stats (written after every spider_closed handler, the extension's flush included).
    const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as Record<string, number | string>;
    rmSync(scratch, { recursive: true, force: true });
    const attempts = 12 + 18 + 11;
    expect(stats).toMatchObject({
      'target_health/events_recorded': attempts,
      'target_health/events_sent': attempts,
      'target_health/events_rejected': 0,
      'target_health/events_dropped': 0,
      'target_health/requests_dropped_stopped': 4,
      'target_health/requests_held': 8,
      'target_health/requests_released': 8,
      'target_health/requests_held_now': 0,
      'downloader/exception_type_count/scrapy.exceptions.IgnoreRequest': 4,
      item_scraped_count: 12 + 12 + 8 + 3,
    });
    expect(output).not.toMatch(/Traceback|refused:|target-health: .*(failed|unreachable|not delivered|gave up)/);

    // The store: every attempt, classified.
    const rows = await h.pool.query<{
      site: string;
      status: number | null;
      network_error: string | null;
      outcome: string;
      canary: boolean;
      retries: number | null;
      valid_records: number | null;
      pool: string | null;
      country: string | null;
      n: string;
    }>(
      `SELECT site, status, network_error, outcome, canary, retries, valid_records, pool, country, count(*)::text AS n
       FROM request_events WHERE site LIKE $1 GROUP BY 1,2,3,4,5,6,7,8,9 ORDER BY 1,2,3,6`,
      [`%-${id}.example.com`],
    );
    const table = rows.rows.map((r) => ({ ...r, n: Number(r.n) }));
    const route = { pool: 'residential', country: 'DE' };
    expect(table).toEqual([
      {
        site: free,
        status: 200,
        network_error: null,
        outcome: 'ok',
        canary: false,
        retries: null,
        valid_records: 1,
        ...route,
        n: 12,
      },
      {
        site: paused,
        status: 200,
        network_error: null,
        outcome: 'ok',
        canary: false,
        retries: null,
        valid_records: 1,
        ...route,
        n: 8,
      },
      {
        site: paused,
        status: 200,
        network_error: null,
        outcome: 'ok',
        canary: true,
        retries: null,
        valid_records: 1,
        ...route,
        n: 3,
      },
      {
        site: throttled,
        status: 200,
        network_error: null,
        outcome: 'ok',
        canary: false,
        retries: null,
        valid_records: 1,
        ...route,
        n: 12,
      },
      // The challenge's body and headers reached the classifier: a challenge, not a hard block.
      {
        site: throttled,
        status: 403,
        network_error: null,
        outcome: 'challenge',
        canary: false,
        retries: null,
        valid_records: null,
        ...route,
        n: 3,
      },
      {
        site: throttled,
        status: null,
        network_error: 'connection_reset',
        outcome: 'hard_block',
        canary: false,
        retries: 1,
        valid_records: null,
        ...route,
        n: 1,
      },
      {
        site: throttled,
        status: null,
        network_error: 'connection_reset',
        outcome: 'hard_block',
        canary: false,
        retries: 2,
        valid_records: null,
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
        ...route,
        n: 1,
      },
    ]);
  },
  300_000,
);

test(
  'a graceful stop while a site is paused ends at once: its held requests go back to the scheduler, none reaches ' +
    'the site',
  async () => {
    const id = randomUUID().slice(0, 8);
    const paused = `held-${id}.example.com`;
    const free = `open-${id}.example.com`;
    await change(h.pool, paused, { paused: true, canaryOnly: true, band: 'resisting', reason: 'test: pause' });
    await change(h.pool, free, {});
    const pages = (n: number) => Array.from({ length: n }, (_, i) => [`/p/${i}`, 'page']);
    const token = await api.token(['ingest', 'read']);
    const scratch = mkdtempSync(join(tmpdir(), 'th-scrapy-stop-'));
    const statsFile = join(scratch, 'stats.json');
    let output = '';
    const child: ChildProcess = spawn(
      venv.python,
      ['-m', 'scrapy', 'runspider', join(SCRAPY_TESTS, 'crawl', 'health_spider.py')],
      {
        cwd: scratch,
        env: {
          ...process.env,
          PYTHONPATH: installed.site,
          PYTHONDONTWRITEBYTECODE: '1',
          TH_API_URL: api.url,
          TH_TOKEN: token,
          TH_PROXY: proxyAddress,
          TH_PLAN: JSON.stringify({ [paused]: pages(5), [free]: pages(3) }),
          TH_STATS_FILE: statsFile,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      // The extension says when it starts holding a site's requests; the free site's pages are served meanwhile.
      await eventually(
        () =>
          Promise.resolve(
            output.includes(`holding the requests of ${paused}`) && proxy.count(free) === 3 ? true : undefined,
          ),
        'the paused site to be held',
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; Scrapy output:\n${output.slice(-6000)}`);
      });
      // Without the hand-back Scrapy would wait for the held requests until the site is
      // resumed: the stop must not hang.
      const stopping = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000).unref()),
      ]);
      expect({ code, output: code === 0 ? '' : output.slice(-6000) }).toEqual({ code: 0, output: '' });
      process.stderr.write(`[scrapy] stopped ${Date.now() - stopping} ms after SIGTERM with 5 requests held\n`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(proxy.count(paused)).toBe(0);
    const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as Record<string, number | string>;
    rmSync(scratch, { recursive: true, force: true });
    expect(stats).toMatchObject({
      'target_health/requests_held': 5,
      'target_health/requests_given_back_at_close': 5,
      'target_health/requests_held_now': 0,
      'target_health/events_recorded': 3,
      'target_health/events_sent': 3,
      // Scrapy's own count: the 3 requests sent; the 5 handed back never left.
      'downloader/request_count': 3,
    });
    expect(stats['target_health/requests_released']).toBeUndefined();
    expect(output).toMatch(/Closing spider \(shutdown\)/);
    expect(output).not.toMatch(/Traceback|could not hand/);
  },
  120_000,
);

/** The settings block of docs/crawlers-scrapy.md ("# settings.py"), as written. */
function documentedSettings(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'crawlers-scrapy.md'), 'utf8');
  const block = [...doc.matchAll(/```python\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((b) => b.startsWith('# settings.py'));
  if (!block) throw new Error('docs/crawlers-scrapy.md: no ```python block starting with "# settings.py"');
  return block;
}

test.each(['newest', 'oldest'] as const)(
  'Scrapy %s: a `scrapy startproject` project configured as the docs say runs with `scrapy crawl` on the ' +
    'installed wheel; a pause heard while admitted requests wait out the slot delay: none of them reaches the ' +
    'site, all are crawled after the resume',
  async (edition) => {
    const venv = venvs[edition];
    process.stderr.write(`[scrapy startproject] Scrapy ${scrapyVersion(edition)}\n`);
    const id = randomUUID().slice(0, 8);
    const site = `slot-${id}.example.com`;
    const PAGES = 12;
    await change(h.pool, site, {});
    const token = await api.token(['ingest', 'read']);
    const scratch = mkdtempSync(join(tmpdir(), 'th-scrapy-project-'));
    const project = join(scratch, 'shop');
    const made = spawnSync(venv.python, ['-m', 'scrapy', 'startproject', 'shop', project], { encoding: 'utf8' });
    expect(made.status).toBe(0);
    // settings.py as startproject made it (the asyncio reactor…), then the docs' block, as written, then the
    // crawl's own choices: 8 requests at once per site and a delay of 1 s (the template of Scrapy 2.13.4+ sets
    // it; 2.13.0's does not), so 8 wait in the slot's delay queue.
    appendFileSync(
      join(project, 'shop', 'settings.py'),
      `\n${documentedSettings()}\nCONCURRENT_REQUESTS_PER_DOMAIN = 8\nDOWNLOAD_DELAY = 1\nROBOTSTXT_OBEY = ` +
        `False\nTELNETCONSOLE_ENABLED = False\nTARGET_HEALTH_BATCH_INTERVAL = 0.2\n`,
    );
    copyFileSync(join(SCRAPY_TESTS, 'project', 'prices.py'), join(project, 'shop', 'spiders', 'prices.py'));

    const heard: Array<{ site: string; paused: boolean; at: number }> = [];
    let counts: Record<string, number> = {};
    let output = '';
    const child: ChildProcess = spawn(
      venv.python,
      ['-m', 'scrapy', 'crawl', 'prices', '-s', 'STATS_CLASS=health_spider.JsonFileStats'],
      {
        cwd: project,
        // The final stats are written by the real-crawl test's stats class (tests/scrapy/crawl/health_spider.py).
        env: {
          ...process.env,
          PYTHONPATH: [installed.site, join(SCRAPY_TESTS, 'crawl')].join(':'),
          PYTHONDONTWRITEBYTECODE: '1',
          TH_API: api.url,
          TH_TOKEN: token,
          TH_PROXY: proxyAddress,
          TH_SITE: site,
          TH_PAGES: String(PAGES),
          TH_STATS_FILE: join(scratch, 'stats.json'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let partial = '';
    child.stdout?.on('data', (c: Buffer) => {
      partial += c.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('@@th ')) {
          output += `${line}\n`;
          continue;
        }
        const m = JSON.parse(line.slice(5)) as { heard?: (typeof heard)[number]; stats?: Record<string, number> };
        if (m.heard) heard.push(m.heard);
        if (m.stats) counts = m.stats;
      }
    });
    child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const hits = () => proxy.hits.filter((x) => x.host === site);
    const until = async <T>(probe: () => T | undefined, what: string, ms: number, everyMs = 200): Promise<T> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = probe();
        if (value !== undefined) return value;
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(
            `timed out waiting for ${what}; counts ${JSON.stringify(counts)}; site hits ${hits().length}; ` +
              `Scrapy output:\n${output.slice(-6000)}`,
          );
        await new Promise((r) => setTimeout(r, everyMs));
      }
    };
    try {
      // Two pages served; the next requests, admitted, wait in Scrapy's slot queue (a 0.5–1.5 s delay each).
      // Paused at once after a page arrived (polled every 20 ms), so the pause lands well before the next leaves.
      await until(() => (hits().length >= 2 ? true : undefined), 'two pages served', 90_000, 20);
      await change(h.pool, site, { paused: true, canaryOnly: true, band: 'resisting', reason: 'test: pause' });
      const pause = await until(
        () => heard.find((x) => x.site === site && x.paused),
        'Scrapy to hear the pause',
        30_000,
      );
      // Every request not served is held by the extension (after the admitted ones were put back as they left the
      // slot queue), or one reached the site after the pause (the failure).
      await until(
        () =>
          hits().some((x) => x.at > pause.at) || (counts.requests_held_now ?? 0) === PAGES - hits().length
            ? true
            : undefined,
        'the unserved requests to be held',
        60_000,
      );
      const after = hits()
        .filter((x) => x.at > pause.at)
        .map((x) => x.at - pause.at);
      process.stderr.write(
        `[scrapy startproject] after the pause was heard: ${after.length} requests reached the site ` +
          `(${after.map((ms) => `+${ms} ms`).join(', ') || 'none'}); put back as they left the slot queue: ` +
          `${counts.requests_paused_on_departure ?? 0}; held: ${counts.requests_held_now ?? 0}\n`,
      );
      expect(after).toEqual([]);
      expect(counts.requests_paused_on_departure ?? 0).toBeGreaterThan(0);

      // Resumed: the held requests go out; the crawl finishes by itself, every page crawled once.
      await change(h.pool, site, { paused: false, canaryOnly: false, band: 'healthy', reason: 'test: resume' });
      const code = await exited;
      expect({ code, output: code === 0 ? '' : output.slice(-6000) }).toEqual({ code: 0, output: '' });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(output).not.toMatch(/Traceback|does not match the requested one|can never take effect/);
    expect(output).toMatch(/Using reactor: twisted\.internet\.asyncioreactor\.AsyncioSelectorReactor/);
    expect(output).toContain(`Scrapy ${scrapyVersion(edition)} started`);
    expect(
      hits()
        .map((x) => x.path)
        .sort(),
    ).toEqual(Array.from({ length: PAGES }, (_, i) => `/p/${i}`).sort());
    const stats = JSON.parse(readFileSync(join(scratch, 'stats.json'), 'utf8')) as Record<string, number | string>;
    rmSync(scratch, { recursive: true, force: true });
    expect(stats).toMatchObject({
      'target_health/events_recorded': PAGES,
      'target_health/events_sent': PAGES,
      'target_health/events_rejected': 0,
      'target_health/requests_held_now': 0,
      item_scraped_count: PAGES,
    });
    expect(stats['target_health/requests_released']).toBe(stats['target_health/requests_held']);
    const { rows } = await h.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [
      site,
    ]);
    expect(Number(rows[0]!.n)).toBe(PAGES);
  },
  180_000,
);
