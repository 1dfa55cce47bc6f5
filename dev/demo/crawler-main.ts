/**
 * The demo's crawler as a process of its own (`node dist/dev/demo/crawler-main.js '<json>'`), as a crawler
 * fleet runs beside Target Health: it records through the HTTP API and obeys the controls stream. The
 * end-to-end test runs it this way — Crawlee's HTTP crawlers load `got-scraping` with a dynamic
 * `import()`, which Jest's module system refuses — and reads what it prints.
 *
 * stdout: one JSON line every `reportEveryMs` and one when it stops — pages handled per host, the
 * adapter's and the recorder's counts, and every controls change it heard of with the time it heard it.
 * SIGTERM/SIGINT: stop crawling, send what the recorder holds, print the last line, exit 0.
 */
import { z } from 'zod';
import { runMain } from '../../server/bootstrap/run-main';
import { UserError } from '../../core/common/user-error';
import { createLogger } from '../../server/logging/logger';
import { createRecorder, apiSink } from '../../server/compat/recorder';
import { createControlsClient } from '../../server/compat/controls';
import { startDemoCrawler } from './crawler';

const configSchema = z.strictObject({
  apiUrl: z.url(),
  token: z.string().min(1),
  hosts: z.array(z.string().min(1)).min(1),
  /** `http://127.0.0.1:port` of the hostile site: page URLs are `http://<host><path>` (reached through the proxies). */
  proxyUrls: z.array(z.url()).min(1),
  chainsPerHost: z.int().min(1).max(64).default(4),
  canaryEveryMs: z.int().min(0).default(3_000),
  reportEveryMs: z.int().min(100).default(500),
});
export type CrawlerProcessConfig = z.input<typeof configSchema>;

export interface CrawlerReport {
  at: number;
  final: boolean;
  handled: Record<string, number>;
  adapter: Record<string, number>;
  recorder: Record<string, number>;
  /** Controls changes as heard, oldest first. */
  heard: Array<{
    at: number;
    site: string;
    version: number;
    paused: boolean;
    canaryOnly: boolean;
    concurrencyLimit: number;
    band: string;
  }>;
}

runMain('target-health demo crawler', async () => {
  const parsed = configSchema.safeParse(JSON.parse(process.argv[2] ?? 'null'));
  if (!parsed.success)
    throw new UserError(
      `crawler config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      2,
    );
  const c = parsed.data;
  const logger = createLogger('warn', 'demo-crawler', process.stderr);
  const recorder = createRecorder({
    sink: apiSink({ apiUrl: c.apiUrl, token: c.token }),
    flushIntervalMs: 250,
    logger,
  });
  const controls = createControlsClient({ apiUrl: c.apiUrl, token: c.token, sites: c.hosts, logger });
  await controls.ready();
  const heard: CrawlerReport['heard'] = [];
  controls.onChange((x) =>
    heard.push({
      at: Date.now(),
      site: x.site,
      version: x.version,
      paused: x.paused,
      canaryOnly: x.canaryOnly,
      concurrencyLimit: x.concurrencyLimit,
      band: x.band,
    }),
  );
  const crawler = startDemoCrawler({
    hosts: c.hosts,
    urlOf: (host, path) => `http://${host}${path}`,
    proxyUrls: c.proxyUrls,
    recorder,
    controls,
    chainsPerHost: c.chainsPerHost,
    canaryEveryMs: c.canaryEveryMs,
  });

  let sent = 0;
  const report = (final: boolean) => {
    const line: CrawlerReport = {
      at: Date.now(),
      final,
      handled: Object.fromEntries(c.hosts.map((h) => [h, crawler.handled(h)])),
      adapter: { ...crawler.adapter.stats() },
      recorder: Object.fromEntries(
        Object.entries(recorder.stats()).filter((e): e is [string, number] => typeof e[1] === 'number'),
      ),
      heard: heard.slice(sent),
    };
    sent = heard.length;
    process.stdout.write(`${JSON.stringify(line)}\n`);
  };
  const timer = setInterval(() => report(false), c.reportEveryMs);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  clearInterval(timer);
  await crawler.stop();
  await recorder.close();
  await controls.close();
  report(true);
});
