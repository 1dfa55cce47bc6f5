/**
 * Tested as installed: `@target-health/crawler` as a Crawlee project gets it. The package is
 * packed (`npm pack -w`, timed), installed from the tarball into a fresh project that has nothing but
 * `@crawlee/cheerio` (from the npm cache, the registry only for what it lacks), and measured: packages
 * and bytes it adds, install time, no native module, load time in a fresh Node. Then a CheerioCrawler
 * written in plain JS in that project, using only the installed package, crawls the test site (any host
 * name, through a forward proxy) with the real API: its events are stored (both attempts at a challenge
 * page too, with its body: Crawlee's defaults throw 403 answers away unread), and a site paused before the
 * crawl gets no request until it is resumed.
 *
 * Crawlee versions: the newest 3.x and the oldest minor the adapter works on (TH_CRAWLEE_VERSIONS, comma
 * separated, to try others). The figures are printed ([crawler-install] lines) for the docs.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestApi, type TestApi } from '../kit/api';
import { changeControls } from '../kit/controls';
import { ROOT } from '../kit/processes';
import { eventually, openHarness, type TestHarness } from '../kit/services';
import { startTestProxy, startTestSite, type TestProxy, type TestSite } from './crawlee-site';

const exec = promisify(execFile);

/** Newest, and the oldest 3.x minor (3.0; its last patch) — this crawl passed on 3.0.4, 3.5.8 and 3.11.5 too. */
const CRAWLEE_VERSIONS = (process.env.TH_CRAWLEE_VERSIONS ?? '3.18.1,3.0.4')
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean);

/** The crawler package's budget: what a Crawlee project may pay for it. */
/**
 * Sizes are absolute. Times are judged against what the same project pays for Crawlee itself, measured in the same
 * run on the same machine (a busy machine slows both alike): installing the package may take at most as long as
 * installing `@crawlee/cheerio` did, and loading it at most 0.4 of loading Crawlee (it measures 0.16–0.21).
 */
const BUDGET = { packMs: 10_000, packages: 10, bytes: 3 * 1024 * 1024, installShare: 1, loadShare: 0.4 };

const npmFlags = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];
const say = (line: string) => process.stderr.write(`[crawler-install] ${line}\n`);

/** Bytes of the files below a directory (what `du -sb` counts for files, without the directory blocks). */
function bytesOf(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesOf(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesOf(join(dir, e.name)) : [join(dir, e.name)],
  );
}

interface LockEntry {
  hasInstallScript?: boolean;
}

/** The installed packages, as npm's hidden lockfile lists them (`node_modules/...` → entry). */
function installed(project: string): Map<string, LockEntry> {
  const lock = JSON.parse(readFileSync(join(project, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  return new Map(Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/')));
}

/** The crawler a user writes, in plain JS (CommonJS), using only what the project installed. */
const CRAWLER_JS = `'use strict';
const { CheerioCrawler } = require('@crawlee/cheerio');
const { Configuration, ProxyConfiguration } = require('@crawlee/core');
const { createRecorder, apiSink } = require('@target-health/crawler/recorder');
const { createControlsClient } = require('@target-health/crawler/controls');
const { targetHealth } = require('@target-health/crawler/crawlee');

async function main() {
  const api = { apiUrl: process.env.TH_API, token: process.env.TH_TOKEN };
  const recorder = createRecorder({ sink: apiSink(api) });
  const controls = createControlsClient(api);
  await controls.ready();
  const th = targetHealth({ recorder, controls });
  const crawler = new CheerioCrawler(
    th.crawlerOptions({
      proxyConfiguration: new ProxyConfiguration({ proxyUrls: [process.env.CRAWL_PROXY] }),
      maxRequestRetries: 1,
      async requestHandler(ctx) {
        th.extraction(ctx, { result: 'ok', validRecords: 1 });
      },
    }),
    new Configuration({ persistStorage: false }),
  );
  await crawler.run(JSON.parse(process.env.CRAWL_URLS));
  await recorder.close();
  await controls.close();
  process.stdout.write('@@th ' + JSON.stringify({ stats: th.stats(), recorder: recorder.stats() }) + '\\n');
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

/**
 * A TypeScript crawler's use of the public entry points. The `@ts-expect-error` lines fail the check if a
 * type degraded to `any` (a declaration that lost its types compiles anything).
 */
const CRAWLER_TS = `import { CheerioCrawler, type CheerioCrawlerOptions } from '@crawlee/cheerio';
import { createRecorder, apiSink, type RecordInput } from '@target-health/crawler/recorder';
import { createControlsClient, type SiteControls } from '@target-health/crawler/controls';
import { targetHealth } from '@target-health/crawler/crawlee';
import { classifyOutcome, parseEvent, type RequestOutcomeEvent } from '@target-health/crawler/events';

const recorder = createRecorder({ sink: apiSink({ apiUrl: 'http://127.0.0.1:8787', token: 't' }) });
const controls = createControlsClient({ apiUrl: 'http://127.0.0.1:8787', token: 't' });
const th = targetHealth({ recorder, controls });
const crawler = new CheerioCrawler(th.crawlerOptions<CheerioCrawlerOptions>({ async requestHandler() {} }));
const input: RecordInput = {
  ts: Date.now(), site: 'shop.example.com', status: 200, latencyMs: 12, headers: { server: undefined },
};
const parsed = parseEvent(input);
const event: RequestOutcomeEvent | undefined = parsed.ok ? parsed.event : undefined;
const site: string | undefined = event?.site;
const outcome: 'ok' | 'hard_block' | 'challenge' | 'soft_block' | 'error' = classifyOutcome({ status: 403 }).outcome;
const paused: boolean | undefined = (controls.controlsFor('shop.example.com') as SiteControls | undefined)?.paused;
// @ts-expect-error status is a number
const wrong: RecordInput = { ts: 1, site: 'a', latencyMs: 1, status: '200' };
// @ts-expect-error a misspelt field
recorder.record({ ts: 1, site: 'a', latencyMs: 1, status: 200, latency: 3 });
// @ts-expect-error event.site is a string
const notNumber: number | undefined = event?.site;
void [crawler, site, outcome, paused, wrong, notNumber];
`;

let h: TestHarness;
let api: TestApi;
let site: TestSite;
let proxy: TestProxy;
let scratch: string;
let tarball: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'th-crawler-install-'));
  h = await openHarness();
  api = await startTestApi(h);
  site = await startTestSite();
  proxy = await startTestProxy(site.port);
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await site?.close();
  await api?.close();
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// First, and on its own: the other tests install what it packs (the pack's `prepack` builds the package).
test('npm pack -w @target-health/crawler is fast and packs only what a user needs', async () => {
  const started = performance.now();
  const { stdout } = await exec(
    'npm',
    ['pack', '-w', '@target-health/crawler', '--json', '--pack-destination', scratch],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  const packMs = performance.now() - started;
  const [info] = JSON.parse(stdout) as Array<{
    filename: string;
    size: number;
    unpackedSize: number;
    entryCount: number;
    files: Array<{ path: string }>;
  }>;
  tarball = join(scratch, info!.filename);
  say(
    `npm pack -w @target-health/crawler: ${Math.round(packMs)} ms (budget ${BUDGET.packMs}); tarball ` +
      `${info!.size} B, unpacked ${info!.unpackedSize} B, ${info!.entryCount} files`,
  );
  const unexpected = info!.files
    .map((f) => f.path)
    .filter(
      (f) =>
        !(f.startsWith('dist/') && (f.endsWith('.js') || f.endsWith('.d.ts'))) &&
        !['README.md', 'CHANGELOG.md', 'LICENSE', 'package.json'].includes(f),
    );
  expect(unexpected).toEqual([]);
  expect(packMs).toBeLessThanOrEqual(BUDGET.packMs);
}, 120_000);

describe.each(CRAWLEE_VERSIONS)('@crawlee/cheerio %s', (version) => {
  let project: string;

  test('the tarball adds few packages and bytes, installs and loads fast, no native module', async () => {
    project = join(scratch, `crawlee-${version}`);
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'a-crawlee-project',
        version: '1.0.0',
        private: true,
        dependencies: { '@crawlee/cheerio': version },
      }),
    );
    const crawleeStarted = performance.now();
    await exec('npm', ['install', ...npmFlags], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
    const crawleeInstallMs = performance.now() - crawleeStarted;
    const before = installed(project);
    const bytesBefore = bytesOf(join(project, 'node_modules'));

    const started = performance.now();
    await exec('npm', ['install', tarball, ...npmFlags], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
    const installMs = performance.now() - started;
    const after = installed(project);
    const added = [...after.keys()].filter((p) => !before.has(p));
    const bytes = bytesOf(join(project, 'node_modules')) - bytesBefore;

    // Native: an install script (node-gyp and the like), a binding.gyp, or a compiled `.node` addon.
    const native = added.filter(
      (p) =>
        after.get(p)?.hasInstallScript === true ||
        existsSync(join(project, p, 'binding.gyp')) ||
        filesOf(join(project, p)).some((f) => f.endsWith('.node')),
    );

    // Three fresh processes; the least of each is the cost (the others add what the machine was busy with).
    const loads: number[] = [];
    const crawleeLoads: number[] = [];
    for (let i = 0; i < 3; i++) {
      const load = await exec(
        process.execPath,
        [
          '-e',
          // The project's Crawlee first: the crawler has loaded it anyway; this package's own cost is timed after.
          "const t0 = performance.now(); require('@crawlee/cheerio'); const t = performance.now(); " +
            "for (const e of ['events', 'recorder', 'controls', 'crawlee']) require('@target-health/crawler/' + e); " +
            'process.stdout.write(JSON.stringify([t - t0, performance.now() - t]));',
        ],
        { cwd: project },
      );
      const [crawleeMs, ownMs] = JSON.parse(load.stdout) as [number, number];
      crawleeLoads.push(crawleeMs);
      loads.push(ownMs);
    }
    const loadMs = Math.min(...loads);
    const crawleeLoadMs = Math.min(...crawleeLoads);

    say(
      `@crawlee/cheerio ${version}: project ${before.size} packages, ${bytesBefore} B; the tarball added ` +
        `${added.length} packages (${added.map((p) => p.replace('node_modules/', '')).join(', ')}), ` +
        `${bytes} B (${(bytes / 1048576).toFixed(2)} MB; budget 3 MB: ${bytes <= BUDGET.bytes ? 'met' : 'NOT MET'}), ` +
        (`install ${Math.round(installMs)} ms (Crawlee's: ${Math.round(crawleeInstallMs)} ms), load ` +
          `${loadMs.toFixed(1)} ms (runs ${loads.map((l) => l.toFixed(1)).join(', ')}; Crawlee's ` +
          `${crawleeLoadMs.toFixed(1)} ms, ×${(loadMs / crawleeLoadMs).toFixed(2)}; budget ×${BUDGET.loadShare}), ` +
          `native modules: ` +
          `${native.length === 0 ? 'none' : native.join(', ')}`),
    );
    expect(added).toContain('node_modules/@target-health/crawler');
    expect(added.length).toBeLessThanOrEqual(BUDGET.packages);
    expect(native).toEqual([]);
    expect(installMs).toBeLessThanOrEqual(BUDGET.installShare * crawleeInstallMs);
    expect(loadMs).toBeLessThanOrEqual(BUDGET.loadShare * crawleeLoadMs);
    expect(bytes).toBeLessThanOrEqual(BUDGET.bytes);
  }, 300_000);

  test(
    'a TypeScript crawler type-checks against the installed declarations, ' + 'without zod (they never name it)',
    async () => {
      // zod is bundled into the package's JavaScript; its declarations must not need zod's types, or a
      // project without zod gets `any` (skipLibCheck) or errors. The project has no zod: Crawlee does not use it.
      expect(existsSync(join(project, 'node_modules', 'zod'))).toBe(false);
      writeFileSync(join(project, 'crawler-types.ts'), CRAWLER_TS);
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2021',
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
            typeRoots: [join(ROOT, 'node_modules', '@types')],
          },
          files: ['crawler-types.ts'],
        }),
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const run = await exec(process.execPath, [tsc, '-p', 'tsconfig.json', '--traceResolution'], {
        cwd: project,
        maxBuffer: 512 * 1024 * 1024,
      }).catch((err: { stdout?: string; message: string }) => {
        const errors = (err.stdout ?? '').split('\n').filter((l) => l.includes('error TS'));
        throw new Error(`tsc failed on the installed declarations:\n${errors.join('\n') || err.message}`);
      });
      // Every module the package's declarations asked for, by specifier: none may be zod (or the bundle's door).
      const asked = [...run.stdout.matchAll(/======== Resolving module '([^']+)' from '([^']+)'/g)]
        .filter((m) => m[2]!.includes('@target-health/crawler'))
        .map((m) => m[1]!);
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.filter((spec) => spec === 'zod' || spec.startsWith('zod/') || /(^|\/)zod$/.test(spec))).toEqual([]);
    },
    120_000,
  );

  test('a plain-JS CheerioCrawler using only the installed package records its events and obeys a pause', async () => {
    const id = randomUUID().slice(0, 8);
    const open = `open-${id}.test`;
    const paused = `paused-${id}.test`;
    await changeControls(h.pool, paused, {
      paused: true,
      canaryOnly: true,
      band: 'resisting',
      reason: 'test: paused before the crawler starts',
    });
    const openUrls = Array.from({ length: 5 }, (_, i) => `http://${open}/ok/${i}`);
    // A challenge page: tried twice (maxRequestRetries 1), each attempt recorded and classified.
    const challengeUrl = `http://${open}/challenge/1`;
    const pausedUrls = Array.from({ length: 3 }, (_, i) => `http://${paused}/ok/${i}`);
    writeFileSync(join(project, 'crawler.js'), CRAWLER_JS);
    const token = await api.token(['ingest', 'read']);
    const child = spawn(process.execPath, ['crawler.js'], {
      cwd: project,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TH_API: api.url,
        TH_TOKEN: token,
        CRAWL_PROXY: proxy.url('residential-de'),
        CRAWL_URLS: JSON.stringify([...openUrls, challengeUrl, ...pausedUrls]),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await eventually(
        () => Promise.resolve(site.counts(open).hits >= openUrls.length + 2 ? true : undefined),
        'the open site crawled',
        60_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; the crawler said:\n${out.slice(-4000)}`);
      });
      // The open site is done while the paused one waits: nothing reached it.
      expect(site.counts(paused).hits).toBe(0);
      const resumedAt = Date.now();
      await changeControls(h.pool, paused, {
        paused: false,
        canaryOnly: false,
        band: 'healthy',
        reason: 'test: resume',
      });
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 60_000))),
      ]);
      clearTimeout(timer);
      if (code !== 0) throw new Error(`the crawler ended with ${String(code)}:\n${out.slice(-4000)}`);
      expect(site.arrivals(paused).every((t) => t >= resumedAt)).toBe(true);
      expect(site.counts(paused).hits).toBe(pausedUrls.length);
      const done = JSON.parse(
        out
          .split('\n')
          .find((l) => l.startsWith('@@th '))!
          .slice(5),
      ) as { stats: Record<string, unknown>; recorder: Record<string, unknown> };
      const events = openUrls.length + 2 + pausedUrls.length;
      expect(done.recorder).toMatchObject({ stored: events, rejected: 0, dropped: 0, failed: 0 });
      const { rows } = await h.pool.query<{ site: string; status: number; outcome: string; n: string }>(
        'SELECT site, status, outcome, count(*) AS n FROM request_events WHERE site = ANY($1) GROUP BY site, ' +
          'status, outcome ORDER BY site, status',
        [[open, paused]],
      );
      expect(rows.map((r) => [r.site, r.status, r.outcome, Number(r.n)])).toEqual([
        [open, 200, 'ok', openUrls.length],
        [open, 403, 'challenge', 2],
        [paused, 200, 'ok', pausedUrls.length],
      ]);
      say(
        `@crawlee/cheerio ${version}: crawl recorded ${events} events through the API (both challenge attempts ` +
          `classified 'challenge'); the paused site got 0 requests until resumed`,
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 180_000);
});
