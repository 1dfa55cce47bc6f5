/**
 * The README's Crawlee snippet, run as written: the ```ts block of the
 * "Crawlee (`@target-health/crawler/crawlee`)" section, its types stripped by SWC, in a process of its own
 * that imports the crawler package by name (node_modules/@target-health/crawler → this clone's
 * packages/crawler, as built), against the real API (events in, the controls stream out) and PostgreSQL.
 * The test runs it as the README says — the URLs as arguments, PROXY_URL a local forward proxy (user
 * name `residential-de`) — and adds, before its `await crawler.run(urls)`, one observer line that prints each controls
 * change it hears (with the time) and the adapter's counts. Controls are written by the product's own writer
 * (server/db/controls.ts).
 *
 * - A site paused before the crawler starts, with the API's controls stream answering 3 s late: none of
 *   its requests reaches the site before the resume (the snippet waits for the first controls — without
 *   `controls.ready()` the first requests went out before any controls arrived);
 * - a site at concurrencyLimit 1, paused three times while a request is in flight: counted at the site,
 *   with the site's clock, not one request arrives after the crawler heard the pause; after each resume
 *   the crawl goes on, and every request is crawled once, none failed. (The snippet leaves Crawlee's
 *   concurrency to its autoscaling, which starts at one task: requests queued at the adapter's gate when
 *   a pause comes are covered by crawlee-http.test.ts, with a fixed concurrency.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { transformSync } from '@swc/core';
import type { TargetHealthStats } from '@target-health/crawler/crawlee';
import { startTestApi, type TestApi } from '../kit/api';
import { changeControls } from '../kit/controls';
import { ROOT } from '../kit/processes';
import { eventually, openHarness, type TestHarness } from '../kit/services';
import { startTestProxy, startTestSite, waitFor, type TestProxy, type TestSite } from './crawlee-site';

const MARK = '@@th ';
/** The gated site's answer time: long enough that its queue waits at the gate while one is in flight. */
const PAGE_MS = 800;
const PAUSES = 3;
/** The API's controls stream answers this late (a loaded API, a far region): the crawler must wait for it. */
const STREAM_DELAY_MS = 3_000;

/** A pass-through to the API that holds requests for the controls stream STREAM_DELAY_MS before forwarding them. */
async function slowStreamApi(apiUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(apiUrl);
  const server: Server = createServer((req, res) => {
    const forward = () => {
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if ((req.url ?? '').startsWith('/v1/controls/stream')) setTimeout(forward, STREAM_DELAY_MS);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The README's Crawlee snippet, split before `await crawler.run(urls);` (where the observer goes). */
export function readmeCrawleeSnippet(): { setup: string; run: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('### Crawlee (`@target-health/crawler/crawlee`)');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (from < 0 || !block)
    throw new Error('README.md: the "Crawlee (`@target-health/crawler/crawlee`)" section has no ```ts block');
  const at = block[1]!.indexOf('await crawler.run(urls);');
  if (at < 0) throw new Error('README.md: the Crawlee snippet lost its `await crawler.run(urls);` line');
  return { setup: block[1]!.slice(0, at), run: block[1]!.slice(at) };
}

function crawlerScript(): string {
  const { setup, run } = readmeCrawleeSnippet();
  const ts = `// ---- the README's snippet, as written ----
${setup}
// ---- the test's observer ----
const say = (line) => process.stdout.write(${JSON.stringify(MARK)} + JSON.stringify(line) + '\\n');
controls.onChange((c) => say({ heard: { site: c.site, paused: c.paused, at: Date.now() } }));
const reporting = setInterval(() => say({ stats: th.stats() }), 50);
// ---- the README's snippet, as written ----
${run}
clearInterval(reporting);
say({ done: { stats: th.stats(), recorder: recorder.stats() } });
`;
  return transformSync(ts, {
    filename: 'readme-crawler.ts',
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'es6' },
  }).code;
}

interface Heard {
  site: string;
  paused: boolean;
  at: number;
}

class ReadmeCrawler {
  readonly heard: Heard[] = [];
  stats: TargetHealthStats | undefined;
  done: { stats: TargetHealthStats; recorder: Record<string, unknown> } | undefined;
  private out = '';
  readonly exited: Promise<number | null>;

  constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.out += `${line}\n`;
      if (!line.startsWith(MARK)) return;
      const m = JSON.parse(line.slice(MARK.length)) as {
        heard?: Heard;
        stats?: TargetHealthStats;
        done?: ReadmeCrawler['done'];
      };
      if (m.heard) this.heard.push(m.heard);
      if (m.stats) this.stats = m.stats;
      if (m.done) this.done = m.done;
    });
    child.stderr?.on('data', (c: Buffer) => (this.out += c.toString('utf8')));
    this.exited = new Promise((resolve) => child.on('close', resolve));
  }

  output(): string {
    return this.out
      .split('\n')
      .filter((l) => !l.startsWith(MARK))
      .join('\n')
      .slice(-6_000);
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

let h: TestHarness;
let api: TestApi;
let slowApi: { url: string; close(): Promise<void> };
let site: TestSite;
let proxy: TestProxy;
let work: string;
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
  slowApi = await slowStreamApi(api.url);
  site = await startTestSite();
  proxy = await startTestProxy(site.port);
  work = mkdtempSync(join(tmpdir(), 'th-readme-crawlee-'));
  // The script imports the package by name, as a crawler project does, and Crawlee from this clone.
  mkdirSync(join(work, 'node_modules'));
  mkdirSync(join(work, 'node_modules', '@target-health'));
  symlinkSync(join(ROOT, 'packages', 'crawler'), join(work, 'node_modules', '@target-health', 'crawler'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@crawlee'), join(work, 'node_modules', '@crawlee'), 'dir');
  writeFileSync(join(work, 'readme-crawler.mjs'), crawlerScript());
});
afterAll(async () => {
  await proxy?.close();
  await site?.close();
  await slowApi?.close();
  await api?.close();
  await h?.close();
  rmSync(work, { recursive: true, force: true });
});

test(
  "the README's Crawlee snippet, as written: no request before the first controls, none after a pause is heard, " +
    'every request crawled once',
  async () => {
    const id = randomUUID().slice(0, 8);
    const early = `early-${id}.test`;
    const gated = `gated-${id}.test`;
    await changeControls(h.pool, early, {
      paused: true,
      canaryOnly: true,
      band: 'resisting',
      reason: 'test: paused before the crawler starts',
    });
    await changeControls(h.pool, gated, { concurrencyLimit: 1, band: 'degrading', reason: 'test: one at a time' });
    const earlyUrls = Array.from({ length: 3 }, (_, i) => `http://${early}/ok/${i}`);
    const gatedUrls = Array.from({ length: 16 }, (_, i) => `http://${gated}/ok/${i}?delay=${PAGE_MS}`);

    const token = await api.token(['ingest', 'read']);
    const c = new ReadmeCrawler(
      spawn(process.execPath, [join(work, 'readme-crawler.mjs'), ...earlyUrls, ...gatedUrls], {
        cwd: work,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TH_API: slowApi.url,
          TH_TOKEN: token,
          PROXY_URL: proxy.url('residential-de'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const until = async <T>(probe: () => T | undefined, what: string, ms = 30_000): Promise<T> => {
      try {
        return await eventually(() => Promise.resolve(probe()), what, ms);
      } catch (err) {
        throw new Error(
          `${(err as Error).message}; adapter: ${JSON.stringify(c.stats)}; the crawler said:\n${c.output()}`,
        );
      }
    };
    try {
      const figures: string[] = [];
      for (let pause = 1; pause <= PAUSES; pause++) {
        // A request of the gated site is at the site; the rest of its queue waits at the adapter's gate.
        const hitsBefore = site.counts(gated).hits;
        // (Polled every 20 ms: the pause lands long before the request in flight ends.)
        await waitFor(
          `pause ${pause}: a request of the gated site in flight`,
          () => site.counts(gated).inFlight === 1 && site.counts(gated).hits > hitsBefore,
          30_000,
        );
        const deferredBefore = c.stats?.deferredByPause ?? 0;
        await changeControls(h.pool, gated, {
          paused: true,
          canaryOnly: true,
          band: 'resisting',
          reason: `test: pause ${pause}`,
        });
        const heard = await until(
          () => c.heard.filter((x) => x.site === gated && x.paused).at(pause - 1),
          `pause ${pause}: the crawler to hear it`,
        );
        // The request in flight ends and frees its gate place: the requests waiting there must be put back,
        // none sent. Waited for until one reached the site after the pause (the failure), or one was put back.
        await until(
          () =>
            site.arrivals(gated).some((t) => t > heard.at) ||
            (site.counts(gated).inFlight === 0 && (c.stats?.deferredByPause ?? 0) > deferredBefore)
              ? true
              : undefined,
          `pause ${pause}: the gated requests to be put back`,
        );
        const after = site.arrivals(gated).filter((t) => t > heard.at);
        figures.push(
          `pause ${pause}: ${after.length} reached the site after the crawler heard it ` +
            `(${after.map((t) => `+${t - heard.at} ms`).join(', ') || 'none'}), deferred on departure so far ` +
            `${c.stats?.deferredOnDeparture ?? '?'}`,
        );
        expect({ pause, reachedAfterPause: after.map((t) => t - heard.at) }).toEqual({ pause, reachedAfterPause: [] });
        await changeControls(h.pool, gated, {
          paused: false,
          canaryOnly: false,
          band: 'degrading',
          reason: `test: resume ${pause}`,
        });
      }
      process.stderr.write(`[crawlee-readme] ${figures.join('; ')}\n`);

      // The early site, paused from before the crawler started: nothing reached it. Resumed, it is crawled.
      expect(site.counts(early).hits).toBe(0);
      const resumedAt = Date.now();
      await changeControls(h.pool, early, {
        paused: false,
        canaryOnly: false,
        band: 'healthy',
        reason: 'test: resume',
      });
      expect(await c.exited).toBe(0);
      expect(site.arrivals(early).every((t) => t >= resumedAt)).toBe(true);
      expect(site.counts(early).hits).toBe(earlyUrls.length);
      // Every gated request crawled once, one at a time; none failed (deferrals are not retries).
      expect(site.counts(gated).hits).toBe(gatedUrls.length);
      expect(site.counts(gated).maxInFlight).toBe(1);
      expect(c.done?.stats).toMatchObject({
        recorded: earlyUrls.length + gatedUrls.length,
        droppedByStop: 0,
        notKept: 0,
      });
      expect(c.done?.recorder).toMatchObject({
        stored: earlyUrls.length + gatedUrls.length,
        rejected: 0,
        dropped: 0,
        failed: 0,
      });
      const { rows } = await h.pool.query<{ site: string; n: string }>(
        'SELECT site, count(*) AS n FROM request_events WHERE site = ANY($1) GROUP BY site ORDER BY site',
        [[early, gated]],
      );
      expect(rows.map((r) => [r.site, Number(r.n)])).toEqual([
        [early, earlyUrls.length],
        [gated, gatedUrls.length],
      ]);
    } finally {
      c.kill();
    }
  },
  180_000,
);
