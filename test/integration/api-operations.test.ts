/**
 * The API's operations surface on the real server (random port), PostgreSQL and the dev server:
 * `/metrics` behind the `read` scope with the per-site gauges of a real loop that is resisting and
 * waiting for a person, then stalled (its worker gone); the per-token rate limit; `/readyz` answering
 * 503 naming PostgreSQL when a (private, embedded) PostgreSQL is stopped.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AwaitingHuman, HealthScore } from '../../common/search-attributes';
import { assessmentHistory } from '../../db/assessments';
import { readControls } from '../../db/controls';
import { createPool } from '../../db/pool';
import { freePort } from '../../stack/free-port';
import { authed, startTestApi, type TestApi } from '../helpers/api';
import { FaultPostgres } from '../helpers/fault-stack';
import { ingestNow, loopInput, prepareSite, startLoop, waitForState } from '../helpers/control-loop';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../helpers/services';

let h: TestHarness;
let api: TestApi;
beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h);
});
afterAll(async () => {
  await api.close();
  await h.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format, samples only (comments skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

const BEFORE = 150_000;

test('/metrics needs the read scope and shows a resisting, waiting site — and its stalled loop', async () => {
  expect((await fetch(`${api.url}/metrics`)).status).toBe(401);
  expect((await fetch(`${api.url}/metrics`, authed(await api.token(['ingest'])))).status).toBe(403);
  const reader = await api.token(['read']);
  const scrape = async (): Promise<Sample[]> => {
    const r = await fetch(`${api.url}/metrics`, authed(reader));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await r.text());
  };
  const of = (samples: Sample[], name: string, site: string, extra: Record<string, string> = {}): number | undefined =>
    samples.find((s) => s.name === name && s.labels.site === site && Object.entries(extra).every(([k, v]) => s.labels[k] === v))?.value;

  // A real loop driven to resisting (paused, waiting for a person), then its worker stopped: frozen.
  const site = await prepareSite(h.pool, 'metrics');
  await ingestNow(h.pool, site, { ok: 100 }, BEFORE);
  const { worker, connection } = await createTestWorker(h);
  const handle = await startLoop(h.client, h.taskQueue, loopInput(site));
  try {
    await worker.runUntil(async () => {
      await waitForState(handle, 'healthy', (s) => s.band === 'healthy' && s.controls !== null);
      await ingestNow(h.pool, site, { hard: 60, challenge: 100, soft: 100 }, BEFORE);
      await waitForState(handle, 'resisting and waiting', (s) => s.band === 'resisting' && s.awaitingHuman !== null);
    });
  } finally {
    await connection.close();
  }
  const described = await eventually(async () => {
    const d = await handle.describe();
    return d.typedSearchAttributes.get(AwaitingHuman) === true ? d : undefined;
  }, 'AwaitingHuman published');
  const [latest] = await assessmentHistory(h.pool, site, 1);
  expect(await readControls(h.pool, site)).toMatchObject({ band: 'resisting', paused: true });

  // Visibility is eventually consistent, and reads are cached for 5 s: wait for the waiting site.
  const samples = await eventually(async () => {
    const s = await scrape();
    return of(s, 'th_site_awaiting_human', site) === 1 ? s : undefined;
  }, 'th_site_awaiting_human 1 for the site', 30_000);
  expect(of(samples, 'th_site_score', site)).toBe(latest!.score);
  expect(of(samples, 'th_site_parser_health', site)).toBe(latest!.parserHealth);
  expect(of(samples, 'th_site_smoothed_score', site)).toBe(described.typedSearchAttributes.get(HealthScore));
  expect(of(samples, 'th_site_smoothed_score', site)).toBeLessThan(50);
  expect(of(samples, 'th_site_band', site, { band: 'resisting' })).toBe(1);
  for (const band of ['learning', 'healthy', 'degrading', 'stopped']) expect(of(samples, 'th_site_band', site, { band })).toBe(0);
  expect(of(samples, 'th_site_loop_running', site)).toBe(1);
  // Ticks sit on the interval's grid (1 s here); a late tick skips slots, so a whole multiple of it.
  const interval = of(samples, 'th_site_tick_interval_seconds', site)!;
  expect(interval).toBeGreaterThanOrEqual(1);
  expect(Number.isInteger(interval)).toBe(true);
  expect(of(samples, 'th_site_last_assessment_age_seconds', site)).toBeGreaterThanOrEqual(0);
  expect(samples.filter((s) => s.name === 'th_site_metrics_source_up').map((s) => [s.labels.source, s.value])).toEqual([['postgres', 1], ['temporal', 1]]);
  // The API's own series are there: the refused scrapes above, by status.
  for (const status of ['401', '403']) expect(samples.find((s) => s.name === 'th_api_request_duration_seconds_count' && s.labels.route === '/metrics' && s.labels.status === status)?.value).toBe(1);

  // No worker: the loop runs but no longer ticks — the alert's condition (age > 5 intervals) comes true.
  await eventually(async () => {
    const s = await scrape();
    return of(s, 'th_site_last_assessment_age_seconds', site)! > 5 * of(s, 'th_site_tick_interval_seconds', site)! ? s : undefined;
  }, 'the stalled loop to be older than 5 tick intervals', 60_000);
  await handle.terminate('test done');
});

test('rate limit: 429 with one line past the limit, per token', async () => {
  const limited = await startTestApi(h, { TH_API_RATE_LIMIT: 2 });
  try {
    const token = await limited.token(['read']);
    expect((await fetch(`${limited.url}/v1/whoami`, authed(token))).status).toBe(200);
    expect((await fetch(`${limited.url}/v1/whoami`, authed(token))).status).toBe(200);
    const refused = await fetch(`${limited.url}/v1/whoami`, authed(token));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.message).toMatch(/^rate limit: more than 2 requests per minute for this token; retry in \d+ s$/);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    // Another token has its own budget.
    expect((await fetch(`${limited.url}/v1/whoami`, authed(await limited.token(['read'])))).status).toBe(200);
  } finally {
    await limited.close();
  }
});

test('/readyz answers 503 naming postgres when PostgreSQL is down (a private embedded server)', async () => {
  // Its own embedded PostgreSQL (under a controller process: dist/ must be built), never the shared one.
  const dir = mkdtempSync(join(tmpdir(), 'th-readyz-'));
  chmodSync(dir, 0o755);
  const pg = new FaultPostgres(join(dir, 'postgres'), await freePort());
  await pg.start();
  const pool = createPool(pg.databaseUrl, 2);
  const own = await startTestApi({ ...h, pool });
  try {
    expect((await fetch(`${own.url}/readyz`)).status).toBe(200);
    await pg.stop();
    const r = await fetch(`${own.url}/readyz`);
    expect(r.status).toBe(503);
    const body = (await r.json()) as { ready: boolean; checks: Array<{ name: string; ok: boolean; error?: string }> };
    expect(body.ready).toBe(false);
    expect(body.checks).toEqual([
      { name: 'postgres', ok: false, error: expect.stringMatching(/ECONNREFUSED|terminat|connect/i) },
      { name: 'temporal', ok: true },
    ]);
    // The process itself is fine.
    expect((await fetch(`${own.url}/healthz`)).status).toBe(200);
  } finally {
    await own.close();
    await pool.end();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
