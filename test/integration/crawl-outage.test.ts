/**
 * Loss under an outage: a real Crawlee crawler with the adapter records through the HTTP
 * API; the API goes away for 30 s mid-crawl and comes back on the same address. The crawler keeps
 * crawling (its controls stay the last known ones), its recorder buffers what it cannot send (bounded,
 * counted), and once the API is back every event it acknowledged is stored exactly once.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../server/api/server';
import { apiEnvSchema } from '../../server/api/settings';
import { createToken } from '../../server/api/tokens';
import { startHostileWorld } from '../../dev/hostile-site';
import type { CrawlerProcessConfig, CrawlerReport } from '../../dev/demo/crawler-main';
import { changeControls } from '../kit/controls';
import { eventually, openHarness, testLogger, type TestHarness } from '../kit/services';

let h: TestHarness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h?.close());

/** The real API on a fixed address (a restart must come back on the same one, as behind a load balancer). */
async function apiOn(port: number): Promise<FastifyInstance> {
  const app = await buildApi({
    pool: h.pool,
    temporal: () => Promise.resolve(h.client),
    taskQueue: h.taskQueue,
    logger: testLogger,
    settings: apiEnvSchema.parse({ TH_API_PORT: String(port) }),
  });
  await app.listen({ host: '127.0.0.1', port });
  return app;
}

test(
  'the API down for 30 s mid-crawl: the crawler crawls on, its recorder buffers, every acknowledged event is ' +
    'stored once',
  async () => {
    const host = `outage-${randomUUID().slice(0, 6)}.hostile.test`;
    const world = await startHostileWorld({
      hosts: [{ name: host, mode: { kind: 'normal', latencyMs: 100 } }],
      routes: [{ label: 'dc-de' }],
    });
    // Controls exist before the crawl (a loop would have written them): nominal, concurrency 2.
    await changeControls(h.pool, host, { concurrencyLimit: 2, reason: 'outage test' });
    let app: FastifyInstance | undefined = await apiOn(0);
    const port = (app.server.address() as AddressInfo).port;
    const { token } = await createToken(h.pool, `outage-${randomUUID().slice(0, 6)}`, ['ingest', 'read']);
    const config: CrawlerProcessConfig = {
      apiUrl: `http://127.0.0.1:${port}`,
      token,
      hosts: [host],
      proxyUrls: world.proxies.map((p) => p.url),
      chainsPerHost: 2,
      canaryEveryMs: 0,
    };
    const child = spawn(
      process.execPath,
      [join(__dirname, '../../dist/dev/demo/crawler-main.js'), JSON.stringify(config)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const reports: CrawlerReport[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{"at":')) reports.push(JSON.parse(line) as CrawlerReport);
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const last = () => reports.at(-1);
    try {
      await eventually(
        () => Promise.resolve((last()?.recorder.stored ?? 0) >= 20 ? true : undefined),
        'events stored before the outage',
        60_000,
      );

      // The API goes away for 30 s.
      await app.close();
      app = undefined;
      const downAt = Date.now();
      const handledAtDown = last()!.handled[host]!;
      await eventually(
        () => Promise.resolve(Date.now() - downAt >= 30_000 ? true : undefined),
        '30 s of outage',
        40_000,
      );
      // Meanwhile the crawl went on (the last known controls held) and the recorder kept what it could not send.
      const during = last()!;
      expect(during.handled[host]! - handledAtDown).toBeGreaterThan(20);
      expect(during.recorder.buffered).toBeGreaterThan(0);
      expect(during.recorder.dropped).toBe(0);

      app = await apiOn(port);
      // The buffer is sent once every event recorded by the end of the outage is acknowledged (stored, or a
      // duplicate of one stored before the connection dropped). The crawl goes on meanwhile, so the buffer is
      // seldom empty at the moment of a report: "buffered is 0" would measure the crawl's pace, not the send.
      const recordedByRecovery = during.recorder.recorded!;
      const acknowledged = (r: Record<string, number> | undefined) => (r?.stored ?? 0) + (r?.duplicates ?? 0);
      await eventually(
        () => Promise.resolve(acknowledged(last()?.recorder) >= recordedByRecovery ? true : undefined),
        'the buffer sent after the outage',
        60_000,
      );

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const final = last()!;
      expect(final.final).toBe(true);
      // Every event the recorder acknowledged is stored, once: the store holds as many rows as it reported stored.
      expect(final.recorder).toMatchObject({ rejected: 0, dropped: 0, failed: 0, buffered: 0 });
      const recorded = final.recorder.recorded!;
      expect(acknowledged(final.recorder)).toBe(recorded);
      const { rows } = await h.pool.query<{ n: string; ids: string }>(
        'SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM request_events WHERE site = $1',
        [host],
      );
      expect(Number(rows[0]!.n)).toBe(recorded);
      expect(Number(rows[0]!.ids)).toBe(recorded);
      // And the crawler's requests are all there: one event per attempt the site answered.
      expect(recorded).toBeGreaterThanOrEqual(world.site.log(host).length);
    } catch (err) {
      if (err instanceof Error) err.message += `\nthe crawler's stderr:\n${stderr}`;
      throw err;
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await app?.close();
      await world.close();
    }
  },
  5 * 60_000,
);
