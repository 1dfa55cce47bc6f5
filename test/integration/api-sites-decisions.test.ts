/**
 * Sites and decisions over HTTP, on the real API server (random port), PostgreSQL and the dev server
 * with a worker: a loop started through the API (and refused a second time), the sites listing with its
 * filters and pages, one site's state, its assessments paged over a closed range, and decisions through
 * the workflow's updates — the token's name is who decided, in the decisions table and the audit trail.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { workflowIdForSite } from '../../core/common/names';
import { controlAudit } from '../../server/db/controls';
import { listDecisions } from '../../server/db/decisions';
import type { SiteSummary } from '../../server/api/schemas/sites';
import { authed, startTestApi, type TestApi } from '../kit/api';
import {
  ingestNow,
  loopInput,
  prepareSite,
  registerSite,
  seedBaseline,
  startHealthySite,
  waitForState,
} from '../kit/control-loop';
import { createTestWorker, eventually, openHarness, type TestHarness } from '../kit/services';

let h: TestHarness;
let api: TestApi;
let worker: Worker;
let connection: NativeConnection;
let running: Promise<void>;
let reader: string;
let decider: string;
let admin: string;
const DECIDER = 'ops-alice@example.com';

/** The API's error-level log lines (a user's bad input must not be one). */
const loggedErrors: string[] = [];

beforeAll(async () => {
  h = await openHarness();
  api = await startTestApi(h, {}, pino({ level: 'error' }, { write: (line: string) => void loggedErrors.push(line) }));
  ({ worker, connection } = await createTestWorker(h));
  running = worker.run();
  reader = await api.token(['read']);
  decider = await api.token(['decide', 'read'], DECIDER);
  admin = await api.token(['admin']);
});
afterAll(async () => {
  worker.shutdown();
  await running;
  await connection.close();
  await api.close();
  await h.close();
});

interface ErrorBody {
  error: { code: string; message: string };
}
async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const r = await fetch(
    `${api.url}${path}`,
    authed(token, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    }),
  );
  return { status: r.status, json: await r.json() };
}
const message = (r: { json: unknown }): string => (r.json as ErrorBody).error.message;

/** Every site of a listing, page by page (`limit` a page), checking no site shows twice. */
async function listAll(query: string, limit: number): Promise<{ sites: SiteSummary[]; pages: number }> {
  const sites: SiteSummary[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await call(
      'GET',
      `/v1/sites?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`,
      reader,
    );
    expect(r.status).toBe(200);
    const page = r.json as { sites: SiteSummary[]; next: string | null };
    expect(page.sites.length).toBeLessThanOrEqual(limit);
    sites.push(...page.sites);
    cursor = page.next;
    pages++;
  } while (cursor !== null);
  expect(new Set(sites.map((s) => s.site)).size).toBe(sites.length);
  return { sites, pages };
}
const names = (sites: SiteSummary[]): string[] => sites.map((s) => s.site);

test(
  'a loop started through the API; sites listed and filtered, state and assessments read; decisions through ' +
    'updates',
  async () => {
    // Site A: started through the API with test-sized settings (as a --config file would hold them).
    const a = await prepareSite(h.pool, 'api-a');
    await ingestNow(h.pool, a, { ok: 100 });
    const { site: _site, ...config } = loopInput(a);
    expect((await call('POST', `/v1/sites/${a}/loop`, decider, { config })).status).toBe(403);
    const bad = await call('POST', `/v1/sites/${a}/loop`, admin, {
      config: { ...config, policy: { concurrency: { nominal: 0 } } },
    });
    expect(bad.status).toBe(400);
    expect(message(bad)).toMatch(/^config\.policy\.concurrency\.nominal: /);
    expect(message(await call('POST', `/v1/sites/${a}/loop`, admin, { config: { ...config, site: a } }))).toBe(
      'config.site: the site comes from the path; remove it',
    );
    expect(message(await call('POST', `/v1/sites/${a}/loop`, admin, { config, ownr: 'x' }))).toBe(
      'unknown field "ownr"',
    );
    const started = await call('POST', `/v1/sites/${a}/loop`, admin, { owner: `owner@${a}`, config });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ site: a, workflowId: workflowIdForSite(a), tickIntervalMs: 1_000 });
    const again = await call('POST', `/v1/sites/${a}/loop`, admin, { config });
    expect(again.status).toBe(409);
    expect(message(again)).toMatch(/already running/);
    const handle = h.client.workflow.getHandle(workflowIdForSite(a));
    await waitForState(handle, `${a} healthy`, (s) => s.band === 'healthy' && s.controls !== null);

    // Site B: started directly; stays healthy and not waiting.
    const b = await prepareSite(h.pool, 'api-b');
    await ingestNow(h.pool, b, { ok: 100 });
    const { handle: handleB } = await startHealthySite(h.client, h.taskQueue, loopInput(b));

    // One site's state, as `status --json` shows it.
    const state = await call('GET', `/v1/sites/${a}?history=3`, reader);
    expect(state.status).toBe(200);
    expect(state.json).toMatchObject({ site: a, band: 'healthy', awaitingHuman: null });
    expect((state.json as { history: unknown[] }).history.length).toBeGreaterThanOrEqual(1);
    expect((state.json as { history: unknown[] }).history.length).toBeLessThanOrEqual(3);
    expect((await call('GET', '/v1/sites/nobody-here.example.com', reader)).status).toBe(404);
    expect(message(await call('GET', `/v1/sites/${a}?history=99`, reader))).toBe(
      'history: expected a whole number 0-50',
    );

    // Decisions: scope, a bad payload (naming the field), a decision not allowed now, then a pause.
    expect((await call('POST', `/v1/sites/${a}/decisions`, reader, { kind: 'pause', why: 'x' })).status).toBe(403);
    const noWhy = await call('POST', `/v1/sites/${a}/decisions`, decider, { kind: 'pause' });
    expect(noWhy).toEqual({
      status: 400,
      json: {
        error: { code: 'bad_request', message: 'why: required: why, in a sentence (it goes into the audit trail)' },
      },
    });
    expect(message(await call('POST', `/v1/sites/${a}/decisions`, decider, { kind: 'resum', why: 'x' }))).toBe(
      'kind: expected one of resume, stop, pause',
    );
    const half = await call('POST', `/v1/sites/${a}/decisions`, decider, {
      kind: 'resume',
      why: 'x',
      mode: 'explicit',
      concurrency: 4,
    });
    expect(half).toEqual({
      status: 400,
      json: { error: { code: 'bad_request', message: 'resume: revisitMultiplier: required with mode "explicit"' } },
    });
    expect(
      message(await call('POST', `/v1/sites/${a}/decisions`, decider, { kind: 'pause', why: 'x', mode: 'cautious' })),
    ).toBe('pause: unknown field "mode"');
    const notWaiting = await call('POST', `/v1/sites/${a}/decisions`, decider, { kind: 'resume', why: 'looks fine' });
    expect(notWaiting).toEqual({
      status: 409,
      json: {
        error: {
          code: 'conflict',
          message: `resume: ${a} is not paused waiting for a decision (band healthy); nothing to resume`,
        },
      },
    });
    expect(
      (await call('POST', '/v1/sites/nobody-here.example.com/decisions', decider, { kind: 'pause', why: 'x' })).status,
    ).toBe(404);
    expect(await listDecisions(h.pool, a)).toEqual([]);

    const paused = await call('POST', `/v1/sites/${a}/decisions`, decider, {
      kind: 'pause',
      why: 'legal asked us to hold',
    });
    expect(paused.status).toBe(200);
    const pausedResult = paused.json as { decidedAt: string };
    expect(paused.json).toMatchObject({
      decision: 'pause',
      band: 'healthy',
      controls: { paused: true, canaryOnly: true },
    });
    const waiting = await waitForState(handle, 'waiting', (s) => s.awaitingHuman !== null);
    expect(waiting.awaitingHuman).toMatchObject({ kind: 'manual', pausedBy: DECIDER, since: pausedResult.decidedAt });

    // The listing: filters run in the visibility store; pages of one site each cover every site once.
    const waitingList = await eventually(async () => {
      const { sites } = await listAll('awaiting=true', 1);
      return names(sites).includes(a) ? sites : undefined;
    }, 'A listed as waiting');
    expect(names(waitingList)).not.toContain(b);
    expect(waitingList.find((s) => s.site === a)).toMatchObject({
      site: a,
      workflowId: workflowIdForSite(a),
      band: 'healthy',
      awaitingHuman: true,
      awaitingSince: pausedResult.decidedAt,
      problem: null,
    });
    const rowA = waitingList.find((s) => s.site === a)!;
    expect(rowA.smoothedScore).toEqual(expect.any(Number));
    expect(rowA.score).toEqual(expect.any(Number));
    expect(rowA.parserHealth).toEqual(expect.any(Number));
    const notWaitingList = await listAll('awaiting=false', 1);
    expect(names(notWaitingList.sites)).toContain(b);
    expect(names(notWaitingList.sites)).not.toContain(a);
    expect(notWaitingList.sites.find((s) => s.site === b)).toMatchObject({
      awaitingHuman: false,
      awaitingSince: null,
      band: 'healthy',
    });
    const healthy = await listAll('band=healthy', 1);
    expect(names(healthy.sites)).toEqual(expect.arrayContaining([a, b]));
    expect(healthy.pages).toBeGreaterThanOrEqual(2);
    expect(names((await listAll('band=resisting', 10)).sites)).not.toContain(a);
    expect(message(await call('GET', '/v1/sites?band=stopped', reader))).toMatch(
      /^band: expected one of learning, healthy, degrading, resisting/,
    );
    expect(message(await call('GET', '/v1/sites?bnad=healthy', reader))).toBe('unknown field "bnad"');
    expect(message(await call('GET', '/v1/sites?cursor=%2F%2F', reader))).toMatch(/^cursor: /);

    // Resume (explicit), answered with the applied result; a second resume is not allowed.
    const resumed = await call('POST', `/v1/sites/${a}/decisions`, decider, {
      kind: 'resume',
      why: 'legal cleared it',
      mode: 'explicit',
      concurrency: 4,
      revisitMultiplier: 3,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json).toMatchObject({
      decision: 'resume',
      band: 'degrading',
      controls: { concurrencyLimit: 4, revisitMultiplier: 3, paused: false, canaryOnly: false },
    });
    const twice = await call('POST', `/v1/sites/${a}/decisions`, decider, { kind: 'resume', why: 'again' });
    expect(twice.status).toBe(409);
    expect(message(twice)).toMatch(/^resume: .* is not paused waiting for a decision/);

    // The token's name is who decided: in the decisions table and the controls' audit trail.
    const decisions = await listDecisions(h.pool, a);
    expect(decisions.map((d) => [d.kind, d.who, d.via])).toEqual([
      ['pause', DECIDER, 'update'],
      ['resume', DECIDER, 'update'],
    ]);
    const audit = await controlAudit(h.pool, a);
    const byDecision = audit.filter((r) => r.decisionKey !== null);
    expect(byDecision.map((r) => r.actor)).toEqual([`human:${DECIDER}`, `human:${DECIDER}`]);

    // Assessments over a closed range, two a page: exactly the stored rows of that range, in order.
    await waitForState(handle, 'a few more ticks', (s) => s.tick >= 5);
    const { rows } = await h.pool.query<{ assessment_key: string; from: string; to: string }>(
      `SELECT assessment_key,
            to_char(min(assessed_at) OVER () AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS from,
            to_char(max(assessed_at) OVER () AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS to
       FROM assessments WHERE site = $1 ORDER BY assessed_at, assessment_key`,
      [a],
    );
    expect(rows.length).toBeGreaterThanOrEqual(5);
    // [from, to): up to (not including) the latest stored row — a closed range while ticks go on.
    const range = `from=${rows[0]!.from}&to=${rows[0]!.to}`;
    const expected = rows.slice(0, -1).map((r) => r.assessment_key);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await call(
        'GET',
        `/v1/sites/${a}/assessments?${range}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`,
        reader,
      );
      expect(r.status).toBe(200);
      const page = r.json as {
        site: string;
        assessments: {
          assessmentKey: string;
          tick: number;
          score: number | null;
          reasons: string[];
          result?: unknown;
        }[];
        next: string | null;
      };
      expect(page.site).toBe(a);
      expect(page.assessments.length).toBeLessThanOrEqual(2);
      expect(page.assessments.every((x) => x.result === undefined && Array.isArray(x.reasons))).toBe(true);
      seen.push(...page.assessments.map((x) => x.assessmentKey));
      cursor = page.next;
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 2));
    const full = await call('GET', `/v1/sites/${a}/assessments?${range}&limit=1&detail=full`, reader);
    const first = (full.json as { assessments: { assessmentKey: string; state: string; result: unknown }[] })
      .assessments[0]!;
    expect(first.assessmentKey).toBe(expected[0]);
    // The stored tick assessment (its key, tick and time are the row's columns).
    expect(first.result).toMatchObject({
      assessment: { state: first.state },
      window: { currentFrom: expect.any(String) },
    });
    expect(message(await call('GET', `/v1/sites/${a}/assessments?from=yesterday`, reader))).toMatch(
      /^from: expected an ISO-8601 time/,
    );
    expect(
      message(await call('GET', `/v1/sites/${a}/assessments?from=${rows[0]!.to}&to=${rows[0]!.from}`, reader)),
    ).toMatch(/^to: .* must be after from/);
    expect(message(await call('GET', `/v1/sites/${a}/assessments?cursor=bm90LWEtY3Vyc29y`, reader))).toMatch(
      /^cursor: /,
    );

    // Stop ends the loop: it leaves the listing, and a later decision finds no running loop.
    const stopped = await call('POST', `/v1/sites/${a}/decisions`, decider, {
      kind: 'stop',
      why: 'we use their feed now',
    });
    expect(stopped).toMatchObject({ status: 200, json: { decision: 'stop', band: 'stopped' } });
    await handle.result();
    expect((await call('POST', `/v1/sites/${a}/decisions`, decider, { kind: 'pause', why: 'x' })).status).toBe(404);
    await eventually(
      async () => (names((await listAll('band=healthy', 50)).sites).includes(a) ? undefined : true),
      'A gone from the listing',
    );
    await handleB.terminate('test done');
  },
);

test(
  'a host name of 164 characters works on every /v1/sites/{site} route; an over-long path is our 414, without ' +
    'the path',
  async () => {
    // Valid: labels of at most 63 characters, 164 in all (Fastify's default refused path parameters over 100).
    const site = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(10)}.long-${randomUUID().slice(0, 8)}.example.com`;
    expect(site).toHaveLength(164);
    await registerSite(h.pool, site);
    await seedBaseline(h.pool, site);
    await ingestNow(h.pool, site, { ok: 100 });
    const { handle } = await startHealthySite(h.client, h.taskQueue, loopInput(site));
    try {
      const state = await call('GET', `/v1/sites/${site}?history=1`, reader);
      expect(state).toMatchObject({ status: 200, json: { site, band: 'healthy' } });
      expect(await call('GET', `/v1/sites/${site}/controls`, reader)).toMatchObject({ status: 200, json: { site } });
      expect(await call('GET', `/v1/sites/${site}/assessments?limit=1`, reader)).toMatchObject({
        status: 200,
        json: { site },
      });
      const paused = await call('POST', `/v1/sites/${site}/decisions`, decider, {
        kind: 'pause',
        why: 'a long host name',
      });
      expect(paused).toMatchObject({ status: 200, json: { decision: 'pause', controls: { paused: true } } });
      expect((await call('POST', `/v1/sites/${site}/loop`, admin)).status).toBe(409);
      // Percent-encoded in the path, as encodeURIComponent writes it: the same site.
      expect(await call('GET', `/v1/sites/${encodeURIComponent(site.toUpperCase())}/controls`, reader)).toMatchObject({
        status: 200,
        json: { site },
      });
    } finally {
      await handle.terminate('test done');
    }
    // A path part longer than any site input: the API's one-line error, not Fastify's body echoing 9 KB.
    const huge = `${'x'.repeat(9_000)}.example.com`;
    const r = await fetch(`${api.url}/v1/sites/${huge}/controls`, authed(reader));
    const text = await r.text();
    expect(r.status).toBe(414);
    expect(JSON.parse(text)).toEqual({
      error: {
        code: 'uri_too_long',
        message: expect.stringMatching(/^path: a part of the path is longer than 8192 characters/),
      },
    });
    expect(text).not.toContain('xxxxxxxxxx');
    // A broken %-escape: our 400, without the path either.
    const broken = await fetch(`${api.url}/v1/sites/shop%ZZ.example.com/controls`, authed(reader));
    expect(broken.status).toBe(400);
    expect(await broken.text()).not.toContain('%ZZ');
  },
);

test('a malformed or foreign listing cursor is a 400 naming cursor', async () => {
  const errorsBefore = loggedErrors.length;
  // Base64url that is not a cursor of ours (Temporal answered `2 UNKNOWN` to it: a 500).
  for (const cursor of [
    'AAAA',
    'bm90LWEtY3Vyc29y',
    Buffer.from(JSON.stringify({ assessedAt: new Date().toISOString(), assessmentKey: 'k' })).toString('base64url'),
  ]) {
    const r = await call('GET', `/v1/sites?cursor=${cursor}`, reader);
    expect(r).toEqual({
      status: 400,
      json: { error: { code: 'bad_request', message: expect.stringMatching(/^cursor: not a cursor of this listing/) } },
    });
  }
  // Well-formed, but of a listing with other filters: not a silently empty (or wrong) page.
  const sites = await Promise.all(
    [0, 1].map(async () => {
      const s = await prepareSite(h.pool, 'api-cursor');
      await ingestNow(h.pool, s, { ok: 100 });
      return startHealthySite(h.client, h.taskQueue, loopInput(s));
    }),
  );
  try {
    const first = await eventually(async () => {
      const r = await call('GET', '/v1/sites?band=healthy&limit=1', reader);
      return (r.json as { next: string | null }).next === null ? undefined : (r.json as { next: string });
    }, 'a first page with a next cursor');
    const next = await call('GET', `/v1/sites?band=healthy&limit=1&cursor=${first.next}`, reader);
    expect(next.status).toBe(200);
    const foreign = await call('GET', `/v1/sites?band=resisting&limit=1&cursor=${first.next}`, reader);
    expect(foreign).toEqual({
      status: 400,
      json: {
        error: {
          code: 'bad_request',
          message: expect.stringMatching(/^cursor: it belongs to a listing with other filters/),
        },
      },
    });
    // The server's own token edited inside a well-formed wrapping.
    const wrapped = JSON.parse(Buffer.from(first.next, 'base64url').toString('utf8')) as { l: string; t: string };
    const edited = Buffer.from(JSON.stringify({ ...wrapped, t: 'AAAA' })).toString('base64url');
    expect(message(await call('GET', `/v1/sites?band=healthy&limit=1&cursor=${edited}`, reader))).toMatch(
      /^cursor: not a cursor of this listing/,
    );
  } finally {
    await Promise.all(sites.map((s) => s.handle.terminate('test done')));
  }
  // None of it was a server error.
  expect(loggedErrors.slice(errorsBefore)).toEqual([]);
});
