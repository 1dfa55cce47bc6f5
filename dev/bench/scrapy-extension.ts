/**
 * `npm run bench:scrapy` — what the Scrapy extension (packages/python, `target_health.scrapy`) costs a crawl: the
 * same Scrapy crawl (TH_BENCH_PAGES product pages of ~100 KB, 16 at once, title and price extracted with CSS selectors)
 * with and without the extension, in the same run, alternating, BENCH_ROUNDS times each. The figure is the
 * Scrapy process's own CPU time per request (all its threads: the event sender and the controls
 * follower included), so the API's and PostgreSQL's work on the same two cores does not count against
 * the crawler. The API is the real one (its ingest threads, embedded PostgreSQL): every event is checked
 * stored.
 *
 * Environment: BENCH_PAGES (2,000), BENCH_ROUNDS (3).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import { createToken } from '../../server/api/tokens';
import { createLogger } from '../../server/logging/logger';
import { normalPageHead, type PageContext } from '../../core/scenarios/pages';
import { Rng } from '../../core/scenarios/rng';
import { ensurePythonVenv } from '../../stack/python-venv';
import { withTiles } from './realistic-events';
import { fmt, heading, line, median, startBenchDb } from './support';

const PAGES = Number(process.env.BENCH_PAGES ?? 2_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PAGE_CHARS = 100_000;
const ROOT = join(__dirname, '..', '..', '..');
const PYTHON_PKG = join(ROOT, 'packages', 'python');
const execFileAsync = promisify(execFile);

interface CrawlFigures {
  cpuS: number;
  wallS: number;
  pages: number;
  items: number;
  eventsSent?: number;
}

/** A forward proxy on loopback that serves one shop's product pages itself (a few variants, rendered once). */
async function startSite(): Promise<{ address: string; close(): Promise<void> }> {
  const rng = new Rng(7);
  const pages = Array.from({ length: 8 }, (_, i) => {
    const c: PageContext = {
      host: 'shop.bench.example',
      pageType: 'product',
      path: `/p/${i}`,
      country: 'DE',
      ts: Date.UTC(2026, 0, 1),
    };
    const head = normalPageHead(rng, 'cloudflare', c);
    return Buffer.from(`${withTiles(rng, head.bodySample, PAGE_CHARS)}</main></body></html>`);
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const n = Number(/\/p\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', server: 'cloudflare' })
      .end(pages[n % pages.length]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function crawl(python: string, withExtension: boolean, env: Record<string, string>): Promise<CrawlFigures> {
  const scratch = mkdtempSync(join(tmpdir(), 'th-bench-scrapy-'));
  try {
    const out = join(scratch, 'figures.json');
    await execFileAsync(
      python,
      ['-m', 'scrapy', 'runspider', join(ROOT, 'dev', 'bench', 'scrapy', 'bench_spider.py')],
      {
        cwd: scratch,
        env: {
          ...process.env,
          ...env,
          PYTHONPATH: join(PYTHON_PKG, 'src'),
          PYTHONDONTWRITEBYTECODE: '1',
          TH_BENCH_EXTENSION: withExtension ? '1' : '0',
          TH_BENCH_OUT: out,
          TH_BENCH_PAGES: String(PAGES),
        },
        maxBuffer: 64 << 20,
      },
    );
    const figures = JSON.parse(readFileSync(out, 'utf8')) as CrawlFigures;
    if (figures.pages !== PAGES) throw new Error(`the crawl got ${figures.pages} of ${PAGES} pages`);
    if (withExtension && figures.eventsSent !== PAGES)
      throw new Error(`the extension sent ${figures.eventsSent} of ${PAGES} events`);
    return figures;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const log = {
    info: (m: string) => process.stderr.write(`${m}\n`),
    warn: (m: string) => process.stderr.write(`${m}\n`),
  };
  const venv = await ensurePythonVenv(join(PYTHON_PKG, 'requirements-scrapy.txt'), log);
  const db = await startBenchDb();
  const settings = { ...apiEnvSchema.parse({ TH_API_PORT: '0' }), TH_API_RATE_LIMIT: 10_000_000 };
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
  const site = await startSite();
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const { token } = await createToken(db.pool, 'bench-scrapy', ['ingest', 'read']);
    process.stdout.write(
      `Scrapy extension benchmark — ${fmt(PAGES)} pages of ~${fmt(PAGE_CHARS / 1000)} KB per crawl, 16 at ` +
        `once, ${ROUNDS} rounds with and without the extension\n`,
    );
    heading('CPU of the Scrapy process per request (all threads), median of the rounds');
    const without: CrawlFigures[] = [];
    const withExt: CrawlFigures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // A site of its own per round: every run's events are checked stored, none counted twice.
      const env = {
        TH_API: url,
        TH_TOKEN: token,
        TH_BENCH_PROXY: site.address,
        TH_BENCH_SITE: `r${round}.shop.bench.example`,
      };
      without.push(await crawl(venv.python, false, env));
      withExt.push(await crawl(venv.python, true, env));
      const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [
        env.TH_BENCH_SITE,
      ]);
      if (Number(rows[0]!.n) !== PAGES)
        throw new Error(`${env.TH_BENCH_SITE}: ${rows[0]!.n} events stored, expected ${PAGES}`);
    }
    const msPer = (runs: CrawlFigures[]) => median(runs.map((r) => (r.cpuS * 1000) / r.pages));
    const base = msPer(without);
    const ext = msPer(withExt);
    line('Scrapy alone', `${fmt(base, 2)} ms CPU per request`);
    line('Scrapy + Target Health extension', `${fmt(ext, 2)} ms CPU per request`);
    line(
      "the extension's own cost",
      `${fmt(ext - base, 2)} ms per request (+${fmt(((ext - base) / base) * 100, 0)} %)`,
    );
    // Every round, so a run disturbed by other work on the cores shows as a spread, not as one figure.
    const rounds = without.map(
      (r, i) => `${fmt((r.cpuS * 1000) / r.pages, 2)} / ${fmt((withExt[i]!.cpuS * 1000) / withExt[i]!.pages, 2)}`,
    );
    line('each round, alone / with (ms per request)', rounds.join(';  '));
    line(
      'wall time per crawl (median)',
      `${fmt(median(without.map((r) => r.wallS)), 1)} s alone, ${fmt(median(withExt.map((r) => r.wallS)), 1)} ` +
        `s with the extension`,
    );
  } finally {
    await site.close();
    await app.close();
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
