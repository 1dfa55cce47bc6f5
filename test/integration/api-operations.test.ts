/**
 * The API's operations surface on the real server (random port), PostgreSQL and the dev server:
 * `/metrics` behind the `read` scope with the per-site gauges of a real loop that is resisting and
 * waiting for a person, then stalled (its worker gone); the per-token rate limit; `/readyz` answering
 * 503 naming PostgreSQL when a (private, embedded) PostgreSQL is stopped.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AwaitingHuman, HealthScore } from '../../loop/search-attributes';
import { assessmentHistory } from '../../server/db/assessments';
import { readControls } from '../../server/db/controls';
import { createPool, type Pool } from '../../server/db/pool';
import { createApiPool } from '../../server/api/start-api';
import { MAX_UNKNOWN_LOOKUPS_PER_MINUTE } from '../../server/api/token-cache';
import { freePort } from '../../stack/free-port';
import { authed, startTestApi, type TestApi } from '../kit/api';
import { FaultPostgres, startFaultDatabase } from '../kit/fault-stack';
import { ingestNow, loopInput, prepareSite, startLoop, waitForState } from '../kit/control-loop';
import { createTestWorker, env, eventually, openHarness, type TestHarness } from '../kit/services';

/** A token of the right form that no one created. */
const randomToken = (): string => `th_${randomBytes(32).toString('base64url')}`;

/** Counts the token lookups sent through `pool` (verifyToken's query), by the hash looked up. */
function countTokenLookups(pool: Pool): { all(): number; of(hash: Buffer): number } {
  const byHash = new Map<string, number>();
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args as [unknown, unknown[] | undefined];
    if (typeof text === 'string' && text.includes('FROM api_tokens WHERE token_hash') && Buffer.isBuffer(values?.[0])) {
      const key = values[0].toString('hex');
      byHash.set(key, (byHash.get(key) ?? 0) + 1);
    }
    return original(...args);
  };
  return {
    of: (hash) => byHash.get(hash.toString('hex')) ?? 0,
    all: () => [...byHash.values()].reduce((a, b) => a + b, 0),
  };
}

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
    samples.find(
      (s) => s.name === name && s.labels.site === site && Object.entries(extra).every(([k, v]) => s.labels[k] === v),
    )?.value;

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
  const samples = await eventually(
    async () => {
      const s = await scrape();
      return of(s, 'th_site_awaiting_human', site) === 1 ? s : undefined;
    },
    'th_site_awaiting_human 1 for the site',
    30_000,
  );
  expect(of(samples, 'th_site_score', site)).toBe(latest!.score);
  expect(of(samples, 'th_site_parser_health', site)).toBe(latest!.parserHealth);
  expect(of(samples, 'th_site_smoothed_score', site)).toBe(described.typedSearchAttributes.get(HealthScore));
  expect(of(samples, 'th_site_smoothed_score', site)).toBeLessThan(50);
  expect(of(samples, 'th_site_band', site, { band: 'resisting' })).toBe(1);
  for (const band of ['learning', 'healthy', 'degrading', 'stopped'])
    expect(of(samples, 'th_site_band', site, { band })).toBe(0);
  expect(of(samples, 'th_site_loop_running', site)).toBe(1);
  // Ticks sit on the interval's grid (1 s here); a late tick skips slots, so a whole multiple of it.
  const interval = of(samples, 'th_site_tick_interval_seconds', site)!;
  expect(interval).toBeGreaterThanOrEqual(1);
  expect(Number.isInteger(interval)).toBe(true);
  expect(of(samples, 'th_site_last_assessment_age_seconds', site)).toBeGreaterThanOrEqual(0);
  expect(samples.filter((s) => s.name === 'th_site_metrics_source_up').map((s) => [s.labels.source, s.value])).toEqual([
    ['postgres', 1],
    ['temporal', 1],
  ]);
  // The API's own series are there: the refused scrapes above, by status.
  for (const status of ['401', '403'])
    expect(
      samples.find(
        (s) =>
          s.name === 'th_api_request_duration_seconds_count' &&
          s.labels.route === '/metrics' &&
          s.labels.status === status,
      )?.value,
    ).toBe(1);

  // No worker: the loop runs but no longer ticks — the alert's condition (age > 5 intervals) comes true.
  await eventually(
    async () => {
      const s = await scrape();
      return of(s, 'th_site_last_assessment_age_seconds', site)! > 5 * of(s, 'th_site_tick_interval_seconds', site)!
        ? s
        : undefined;
    },
    'the stalled loop to be older than 5 tick intervals',
    60_000,
  );
  await handle.terminate('test done');
});

test('rate limit: 429 with one line past the limit, per token', async () => {
  const limited = await startTestApi(h, { TH_API_RATE_LIMIT: 2 });
  try {
    const token = await limited.token(['read']);
    // The first request verifies the token (it counts against the address: the token was not known yet).
    expect((await fetch(`${limited.url}/v1/whoami`, authed(token))).status).toBe(200);
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

test('rate limit without a valid token: by address, "from this address"', async () => {
  const limited = await startTestApi(h, { TH_API_RATE_LIMIT: 2 });
  try {
    expect((await fetch(`${limited.url}/v1/whoami`)).status).toBe(401);
    expect((await fetch(`${limited.url}/v1/whoami`, authed(randomToken()))).status).toBe(401);
    // Neither a missing token nor a made-up one is a budget of its own: both count against the address.
    for (const init of [{}, authed(randomToken())]) {
      const refused = await fetch(`${limited.url}/v1/whoami`, init);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /^rate limit: more than 2 requests per minute from this address \(without a valid token\); retry in \d+ s$/,
      );
    }
  } finally {
    await limited.close();
  }
});

test(
  'a flood of 10,000 random tokens: 429s by address, a bounded number of token lookups, a valid token keeps ' +
    'working',
  async () => {
    // The default rate limit (6,000 a minute): what bounds the lookups is the unknown-token budget.
    const pool = createPool(env('DATABASE_URL'), 4);
    const lookups = countTokenLookups(pool);
    const flooded = await startTestApi({ ...h, pool });
    try {
      const valid = await flooded.token(['read']);
      const validHash = createHash('sha256').update(valid).digest();
      expect((await fetch(`${flooded.url}/v1/whoami`, authed(valid))).status).toBe(200);
      const statuses = new Map<number, number>();
      const validStatuses: number[] = [];
      const FLOOD = 10_000;
      let sent = 0;
      const flooder = async (): Promise<void> => {
        while (sent < FLOOD) {
          const n = (sent += 1);
          const r = await fetch(`${flooded.url}/v1/whoami`, authed(randomToken()));
          await r.arrayBuffer();
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          // Meanwhile, now and then, the valid token from the same address.
          if (n % 500 === 0) validStatuses.push((await fetch(`${flooded.url}/v1/whoami`, authed(valid))).status);
        }
      };
      const started = Date.now();
      await Promise.all(Array.from({ length: 16 }, flooder));
      const seconds = (Date.now() - started) / 1000;
      process.stdout.write(
        `[flood] ${FLOOD} random tokens in ${seconds.toFixed(1)} s: ` +
          `${JSON.stringify(Object.fromEntries(statuses))}; lookups: ${lookups.all() - lookups.of(validHash)} ` +
          `unknown, ${lookups.of(validHash)} of the valid token\n`,
      );
      // Only the address's budget of unknown tokens (per minute) was looked up and answered 401; the rest
      // were refused 429 before any lookup.
      // Fixed one-minute windows: a flood of d seconds meets at most floor(d / 60) + 1 of them.
      const budget = MAX_UNKNOWN_LOOKUPS_PER_MINUTE * (Math.floor(seconds / 60) + 1);
      expect(statuses.get(401)).toBeLessThanOrEqual(budget);
      expect(statuses.get(429)).toBeGreaterThanOrEqual(FLOOD - budget);
      expect(lookups.all() - lookups.of(validHash)).toBeLessThanOrEqual(budget);
      // The valid token kept its own budget and its place in the cache: re-verified only as its 5 s cache expired.
      expect(validStatuses).toEqual(Array.from({ length: validStatuses.length }, () => 200));
      expect(validStatuses.length).toBeGreaterThanOrEqual(FLOOD / 500 - 1);
      expect(lookups.of(validHash)).toBeLessThanOrEqual(1 + Math.ceil(seconds / 5));
    } finally {
      await flooded.close();
      await pool.end();
    }
  },
  180_000,
);

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

test(
  'PostgreSQL frozen: every route answers 503 store_unavailable with Retry-After within seconds, the token check ' +
    'included; /readyz says why',
  async () => {
    // Its own embedded PostgreSQL (migrated), frozen by SIGSTOP of the postmaster and its backends, then thawed.
    const db = await startFaultDatabase('api-freeze');
    const pg = db.postgres;
    // The API's own pool, with the API's limits (server/api/start-api.ts).
    const pool = createApiPool(pg.databaseUrl);
    // As `target-health api` runs: the API's pool, NDJSON bodies on ingest threads with their own limits.
    const own = await startTestApi({ ...h, pool }, {}, undefined, { ingestThreads: true, databaseUrl: pg.databaseUrl });
    let thawLater: NodeJS.Timeout | undefined;
    try {
      const cached = await own.token(['admin']);
      // Created before the freeze, used for the first time during it: its verification needs the database.
      const unverified = await own.token(['admin']);
      const site = `freeze-${randomBytes(4).toString('hex')}.example.com`;
      expect((await fetch(`${own.url}/v1/whoami`, authed(cached))).status).toBe(200);
      // Idle pooled connections to get during the freeze (the hang this guards against was on one of them).
      await Promise.all(
        Array.from({ length: 4 }, () =>
          fetch(`${own.url}/v1/sites/${site}/assessments`, authed(cached)).then((r) => expect(r.status).toBe(200)),
        ),
      );
      const warm = JSON.stringify({
        eventId: 'freeze-0',
        ts: Date.now() - 2_000,
        site,
        route: { country: 'DE', pool: 'res' },
        pageType: 'product',
        status: 200,
        latencyMs: 100,
        bytes: 50_000,
      });
      // …and on the ingest threads.
      expect(
        (
          await fetch(
            `${own.url}/v1/events`,
            authed(cached, { method: 'POST', body: warm, headers: { 'content-type': 'application/x-ndjson' } }),
          )
        ).status,
      ).toBe(200);
      const event = JSON.stringify({
        eventId: 'freeze-1',
        ts: Date.now() - 1_000,
        site,
        route: { country: 'DE', pool: 'res' },
        pageType: 'product',
        status: 200,
        latencyMs: 100,
        bytes: 50_000,
      });
      const requests: Array<[string, string, RequestInit]> = [
        ['token check (GET /v1/whoami)', '/v1/whoami', authed(unverified)],
        [
          'token check (POST /v1/events)',
          '/v1/events',
          authed(unverified, { method: 'POST', body: event, headers: { 'content-type': 'application/x-ndjson' } }),
        ],
        [
          'POST /v1/events',
          '/v1/events',
          authed(cached, { method: 'POST', body: event, headers: { 'content-type': 'application/x-ndjson' } }),
        ],
        ['GET controls (not cached)', `/v1/sites/${site}/controls`, authed(cached)],
        ['GET assessments', `/v1/sites/${site}/assessments`, authed(cached)],
      ];
      pg.freeze();
      // Thawed by then whatever the API does (a hanging request must fail the test, not leave the server frozen).
      thawLater = setTimeout(() => pg.thaw(), 30_000);
      const answers = await Promise.all(
        requests.map(async ([what, path, init]) => {
          const started = Date.now();
          const r = await fetch(`${own.url}${path}`, init);
          return {
            what,
            ms: Date.now() - started,
            status: r.status,
            retryAfter: r.headers.get('retry-after'),
            body: (await r.json()) as { error?: { code: string; message: string } },
          };
        }),
      );
      const ready = await fetch(`${own.url}/readyz`);
      const readyBody = (await ready.json()) as {
        ready: boolean;
        checks: Array<{ name: string; ok: boolean; error?: string }>;
      };
      pg.thaw();
      process.stdout.write(
        `[freeze] ${answers.map((a) => `${a.what}: ${a.status} in ${a.ms} ms`).join('; ')}; /readyz ` +
          `${ready.status} ${JSON.stringify(readyBody.checks[0])}\n`,
      );
      for (const a of answers) {
        expect({ what: a.what, status: a.status, retryAfter: a.retryAfter, code: a.body.error?.code }).toEqual({
          what: a.what,
          status: 503,
          retryAfter: '5',
          code: 'store_unavailable',
        });
        expect(a.body.error?.message).toMatch(/^database: /);
        // Bounded, not the freeze: 3 s for a connection and 5 s for an answer (API_POOL_TIMEOUTS), 10 s
        // on the ingest threads (API_INGEST_TIMEOUTS); a little more for this loaded machine.
        expect(a.ms).toBeLessThan(a.what === 'POST /v1/events' ? 13_000 : 8_000);
      }
      expect(ready.status).toBe(503);
      expect(readyBody.checks).toEqual([
        { name: 'postgres', ok: false, error: expect.stringMatching(/no answer/) },
        { name: 'temporal', ok: true },
      ]);
      // Thawed: the same requests succeed again, on fresh connections.
      await eventually(
        async () => ((await fetch(`${own.url}/v1/whoami`, authed(unverified))).status === 200 ? true : undefined),
        'the API to answer again after the thaw',
      );
      expect((await fetch(`${own.url}/v1/sites/${site}/assessments`, authed(cached))).status).toBe(200);
    } finally {
      clearTimeout(thawLater);
      pg.thaw();
      await own.close();
      await pool.end();
      await db.close();
    }
  },
  180_000,
);
