/**
 * Canaries against the real PostgreSQL of the test services and a real local HTTP server and proxy:
 * definitions saved in one transaction, the `runDueCanaries` activity (once per slot, safe to call
 * every tick and concurrently), latest results, and the baseline-trust days.
 */
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import pino from 'pino';
import { makeCanaryActivities, type RunDueCanariesInput, type RunDueCanariesResult } from '../../activities/canaries';
import { CanaryDefinitionError, parseCanaryDefinition } from '../../core/canaries/definition';
import { parseReachPolicy } from '../../core/canaries/reach';
import { slotFor } from '../../core/canaries/schedule';
import { definitionOptions } from '../../server/canary-runner/define';
import { storeRun } from '../../server/canary-runner/runner';
import type { CanarySettings } from '../../server/canary-runner/settings';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import {
  canaryDays,
  canaryFailedDays,
  type CanaryRunRecord,
  type CanaryToSave,
  DEFAULT_BASELINE_TRUST,
  deleteCanaryRunsBefore,
  latestCanaryRuns,
  listCanaries,
  recordCanaryRunOnce,
  removeCanary,
  saveCanaries,
} from '../../server/db/canaries';
import { createPool, type Pool } from '../../server/db/pool';
import { upsertSite } from '../../server/db/sites';
import { parseEvent } from '@target-health/crawler/events/event';
import {
  answer,
  fixturePage,
  type FixtureServer,
  type ForwardProxy,
  KNOWN_PRICE,
  productPage,
  startFixtureServer,
  startForwardProxy,
} from '../kit/http-fixtures';
import { env } from '../kit/services';
import { joinRegExp } from '../kit/regexp';

// Non-passing canaries log warnings by design; these tests provoke many on purpose.
const testLogger = pino({ level: 'error' });

const MIN = 60_000;
let pool: Pool;
let server: FixtureServer;
let proxy: ForwardProxy;
let settings: CanarySettings;

const newSite = () => `canary-${randomUUID().slice(0, 8)}.example.com`;

function entry(site: string, definition: Record<string, unknown>, origin = ''): CanaryToSave {
  const parsed = parseCanaryDefinition(definition, definitionOptions(settings, site));
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return { site, definition: parsed.definition, origin };
}

const PRICE = [{ css: '.price', equals: KNOWN_PRICE }];

beforeAll(async () => {
  pool = createPool(env('DATABASE_URL'), 4);
  [server, proxy] = await Promise.all([
    startFixtureServer({
      '/p/known': answer.html(productPage()),
      '/p/changed': answer.html(productPage('$119.95')),
      '/p/challenge': answer.html(fixturePage('cloudflare-just-a-moment.html'), 403),
      '/p/slow': answer.slow(productPage(), 20_000),
      // Crawled pages that once made the run unstorable (and the activity retry forever).
      '/p/emoji': answer.html(productPage(`${'A'.repeat(116)}😀 now $119.95`)),
      '/p/nul': answer.html('<!doctype html><title>Oops</title><p>Internal\u0000error</p>', 500),
    }),
    startForwardProxy(),
  ]);
  // The fixture servers listen on 127.0.0.1: the operator's opt-in TARGET_HEALTH_CANARY_ALLOWED_TARGETS would give.
  const loopback = parseReachPolicy('127.0.0.1');
  if (!loopback.ok) throw new Error(loopback.problem);
  settings = {
    userAgent: 'target-health-canary/test',
    timeoutMs: 10_000,
    connectTimeoutMs: 1_000,
    maxBodyBytes: 1024 * 1024,
    concurrency: 2,
    routes: new Map([['local', proxy.url]]),
    reach: loopback.policy,
  };
});
afterAll(async () => {
  await Promise.all([server.close(), proxy.close(), pool.end()]);
});

describe('canary definitions in PostgreSQL', () => {
  test('created, unchanged when identical, updated with a new revision, removed', async () => {
    const site = newSite();
    await upsertSite(pool, site);
    const def = { name: 'price', url: `${server.origin}/p/known`, route: 'local', expect: PRICE };
    expect(await saveCanaries(pool, [entry(site, def)])).toEqual({
      created: [`${site}/price`],
      updated: [],
      unchanged: [],
      removed: [],
    });
    expect(await saveCanaries(pool, [entry(site, def)])).toMatchObject({ unchanged: [`${site}/price`] });
    expect(await saveCanaries(pool, [entry(site, { ...def, interval: '5m' })])).toMatchObject({
      updated: [`${site}/price`],
    });
    const [stored] = await listCanaries(pool, site);
    expect(stored).toMatchObject({
      id: `${site}/price`,
      revision: 2,
      definition: { intervalMs: 5 * MIN, route: 'local' },
    });
    expect(await removeCanary(pool, `${site}/price`)).toBe(true);
    expect(await removeCanary(pool, `${site}/price`)).toBe(false);
  });

  test('an unknown site refuses the whole batch: nothing is written', async () => {
    const known = newSite();
    const unknown = newSite();
    await upsertSite(pool, known);
    const batch = [
      entry(known, { name: 'a', url: `${server.origin}/p/known`, expect: PRICE }, 'canaries[0]'),
      entry(unknown, { name: 'b', url: `${server.origin}/p/known`, expect: PRICE }, 'canaries[1]'),
    ];
    const error = await saveCanaries(pool, batch).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CanaryDefinitionError);
    expect((error as CanaryDefinitionError).errors).toEqual([
      `canaries[1].site: ${unknown} is not a registered site; register it with \`target-health start ` +
        `${unknown}\` first`,
    ]);
    expect(await listCanaries(pool, known)).toEqual([]);
  });

  test("prune removes the canaries of the file's sites that the file no longer lists", async () => {
    const site = newSite();
    await upsertSite(pool, site);
    await saveCanaries(
      pool,
      ['a', 'b', 'c'].map((name) => entry(site, { name, url: `${server.origin}/p/known`, expect: PRICE })),
    );
    const result = await saveCanaries(
      pool,
      [entry(site, { name: 'b', url: `${server.origin}/p/known`, expect: PRICE })],
      { prune: true },
    );
    expect(result).toMatchObject({ unchanged: [`${site}/b`], removed: [`${site}/a`, `${site}/c`] });
    expect((await listCanaries(pool, site)).map((c) => c.name)).toEqual(['b']);
  });
});

describe('runDueCanaries (the control loop activity)', () => {
  async function siteWithCanaries(): Promise<string> {
    const site = newSite();
    await upsertSite(pool, site);
    await saveCanaries(pool, [
      entry(site, { name: 'known', url: `${server.origin}/p/known`, route: 'local', interval: '15m', expect: PRICE }),
      entry(site, {
        name: 'changed',
        url: `${server.origin}/p/changed`,
        route: 'local',
        interval: '15m',
        expect: PRICE,
      }),
      entry(site, {
        name: 'challenge',
        url: `${server.origin}/p/challenge`,
        route: 'local',
        interval: '15m',
        expect: PRICE,
      }),
    ]);
    return site;
  }
  const activities = () => makeCanaryActivities({ pool, logger: testLogger, settings });

  test('runs each due canary once per slot through its route; repeated calls return the same runs', async () => {
    const site = await siteWithCanaries();
    const { runDueCanaries } = activities();
    const asOf = Date.now();
    const seenBefore = proxy.seen.length;

    const first = await runDueCanaries({ site, asOf });
    expect(first).toMatchObject({ site, fetched: 3, canaries: 3, window: { runs: 3, failures: 1, mismatches: 1 } });
    expect(proxy.seen.length - seenBefore).toBe(3);
    expect(first.evidence.map((e) => [e.name, e.result])).toEqual([
      ['changed', 'mismatch'],
      ['challenge', 'blocked'],
      ['known', 'pass'],
    ]);
    expect(first.evidence[0]).toMatchObject({
      route: 'route local',
      reason: 'wrong value on a normal-looking page: .price text equals "$139.95", got "$119.95"',
    });
    expect(first.latest.map((r) => r.canaryId).sort()).toEqual(first.current.map((r) => r.canaryId).sort());
    for (const run of first.current) {
      expect(run.scheduledAt).toBe(slotFor(run.canaryId, 15 * MIN, asOf).scheduledAt);
      expect(run.trigger).toBe('schedule');
    }
    expect(first.events).toHaveLength(3);
    for (const event of first.events) {
      expect(parseEvent(event).ok).toBe(true);
      expect(event).toMatchObject({ site, canary: true, route: { pool: 'local' } });
    }
    expect(first.nextDueAt).not.toBeNull();

    // Later in the same slot (a retry, the next tick): nothing is fetched, the same runs come back.
    const again = await runDueCanaries({ site, asOf: asOf + 1 });
    expect(again.fetched).toBe(0);
    expect(proxy.seen.length - seenBefore).toBe(3);
    expect(again.current).toEqual(first.current);
    expect(again.events).toEqual(first.events);
    expect(again.window).toEqual(first.window);
  });

  test('concurrent calls for the same slot record each run once', async () => {
    const site = await siteWithCanaries();
    const { runDueCanaries } = activities();
    const asOf = Date.now();
    const [a, b] = await Promise.all([runDueCanaries({ site, asOf }), runDueCanaries({ site, asOf })]);
    expect(a.current).toEqual(b.current);
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM canary_runs WHERE site = $1', [site]);
    expect(Number(rows[0]?.n)).toBe(3);
  });

  test('the next slot runs again, and latest is the newest run', async () => {
    const site = await siteWithCanaries();
    const { runDueCanaries } = activities();
    const asOf = Date.now();
    const first = await runDueCanaries({ site, asOf });
    const later = await runDueCanaries({ site, asOf: new Date(asOf + 15 * MIN).toISOString() });
    expect(later.fetched).toBe(3);
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM canary_runs WHERE site = $1', [site]);
    expect(Number(rows[0]?.n)).toBe(6);
    const latest = await latestCanaryRuns(pool, site);
    expect(latest.map((r) => r.scheduledAt).sort()).toEqual(later.current.map((r) => r.scheduledAt).sort());
    expect(latest.every((r) => first.current.every((f) => f.scheduledAt !== r.scheduledAt))).toBe(true);
  });

  test('an edited canary drops its old answers: the new revision counts once it has run', async () => {
    const site = await siteWithCanaries();
    const { runDueCanaries } = activities();
    const asOf = Date.now();
    await runDueCanaries({ site, asOf });
    // The expected price was wrong: fix the definition of "changed" to the page's real value.
    await saveCanaries(pool, [
      entry(site, {
        name: 'changed',
        url: `${server.origin}/p/changed`,
        route: 'local',
        interval: '15m',
        expect: [{ css: '.price', equals: '$119.95' }],
      }),
    ]);
    const sameSlot = await runDueCanaries({ site, asOf: asOf + 1 });
    expect(sameSlot.latest.map((r) => r.name).sort()).toEqual(['challenge', 'known']);
    expect(sameSlot.window).toEqual({ runs: 2, failures: 1, mismatches: 0 });
    const nextSlot = await runDueCanaries({ site, asOf: asOf + 15 * MIN });
    expect(nextSlot.latest.find((r) => r.name === 'changed')).toMatchObject({ result: 'pass', revision: 2 });
  });

  test('a site without canaries: nothing to do, quickly', async () => {
    const site = newSite();
    await upsertSite(pool, site);
    const result = await activities().runDueCanaries({ site });
    expect(result).toMatchObject({
      site,
      fetched: 0,
      canaries: 0,
      current: [],
      latest: [],
      events: [],
      evidence: [],
      nextDueAt: null,
      window: { runs: 0, failures: 0, mismatches: 0 },
    });
  });

  test('a route label the worker does not know is recorded as a configuration error, not a site failure', async () => {
    const site = newSite();
    await upsertSite(pool, site);
    const withRoute = { ...settings, routes: new Map([...settings.routes, ['gone', proxy.url]]) };
    const parsed = parseCanaryDefinition(
      { name: 'p', url: `${server.origin}/p/known`, route: 'gone', expect: PRICE },
      definitionOptions(withRoute, site),
    );
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    await saveCanaries(pool, [{ site, definition: parsed.definition, origin: '' }]);
    const result = await activities().runDueCanaries({ site });
    expect(result.current[0]).toMatchObject({ result: 'error', countsForSite: false, outcome: null });
    expect(result.window).toEqual({ runs: 0, failures: 0, mismatches: 0 });
    expect(result.events).toEqual([]);
    expect(result.evidence[0]?.reason).toMatch(
      /^configuration: route label "gone" is not in TARGET_HEALTH_ROUTES on this worker/,
    );
  });

  test('inside an activity context it heartbeats per canary, and a cancelled run records nothing', async () => {
    const site = await siteWithCanaries();
    const envHeartbeats = new MockActivityEnvironment();
    let heartbeats = 0;
    envHeartbeats.on('heartbeat', () => (heartbeats += 1));
    const { runDueCanaries } = activities();
    const result = await envHeartbeats.run<[RunDueCanariesInput], RunDueCanariesResult, typeof runDueCanaries>(
      runDueCanaries,
      { site, asOf: Date.now() },
    );
    expect(result.fetched).toBe(3);
    expect(heartbeats).toBe(3);

    const slowSite = newSite();
    await upsertSite(pool, slowSite);
    await saveCanaries(pool, [entry(slowSite, { name: 'slow', url: `${server.origin}/p/slow`, expect: PRICE })]);
    const cancelling = new MockActivityEnvironment();
    const hitsBefore = server.hits('/p/slow');
    const running = cancelling.run(runDueCanaries, { site: slowSite });
    // Cancel once the page server has the request in hand (a condition, not a sleep).
    const deadline = Date.now() + 10_000;
    while (server.hits('/p/slow') === hitsBefore && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    const started = Date.now();
    cancelling.cancel();
    await expect(running).rejects.toBeDefined();
    expect(Date.now() - started).toBeLessThan(5_000);
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM canary_runs WHERE site = $1', [
      slowSite,
    ]);
    expect(Number(rows[0]?.n)).toBe(0);
  });

  test(
    'an emoji where the shown value is cut and a 500 page holding NUL: ' + 'results recorded, the step does not throw',
    async () => {
      const site = newSite();
      await upsertSite(pool, site);
      await saveCanaries(pool, [
        entry(site, { name: 'emoji', url: `${server.origin}/p/emoji`, expect: PRICE }),
        entry(site, { name: 'nul', url: `${server.origin}/p/nul`, expect: PRICE }),
      ]);
      // What the loop's tick calls (assessSite → runDueCanaries): it resolves, with both runs recorded.
      const result = await activities().runDueCanaries({ site, asOf: Date.now() });
      expect(result.fetched).toBe(2);
      expect(result.current.map((r) => [r.name, r.result, r.countsForSite])).toEqual([
        ['emoji', 'mismatch', true],
        ['nul', 'error', true],
      ]);
      const nul = result.current.find((r) => r.name === 'nul')!;
      expect(nul.evidence).toBe('status 500, title "Oops": Oops Internal\uFFFDerror');
      const { rows } = await pool.query<{
        name: string;
        checks: Array<{ check: string; actual: string }>;
        evidence: string;
      }>(
        "SELECT split_part(canary_id, '/', 2) AS name, checks, evidence FROM canary_runs WHERE site = $1 ORDER " +
          'BY canary_id',
        [site],
      );
      expect(rows.map((r) => r.name)).toEqual(['emoji', 'nul']);
      for (const row of rows)
        for (const text of [row.evidence, ...row.checks.map((c) => c.actual)]) expect(isWellFormed(text)).toBe(true);
      expect(rows[0]!.checks.find((c) => c.check === '.price text equals "$139.95"')?.actual).toBe(
        `"${'A'.repeat(116)}…"`,
      );
      // Their events reached the signal store, like any canary fetch.
      expect(result.events).toHaveLength(2);
    },
  );

  test(
    'a run PostgreSQL refuses is recorded without its details, ' + 'as an internal error that does not count',
    async () => {
      const site = newSite();
      const ranAt = new Date();
      const record: CanaryRunRecord = {
        runKey: `${site}/odd/${ranAt.toISOString()}`,
        canary: { id: `${site}/odd`, site, revision: 1 },
        trigger: 'schedule',
        scheduledAt: ranAt.toISOString(),
        ranAt,
        result: 'mismatch',
        countsForSite: true,
        outcome: 'ok',
        rule: 'status',
        reason: 'wrong value on a normal-looking page',
        evidence: 'expected "$139.95"',
        route: 'direct',
        status: 200,
        // Beyond the integer column: a value no cleaning of texts can fix.
        latencyMs: 2 ** 31,
        bytes: 100,
        checks: [],
        event: null,
      };
      await expect(recordCanaryRunOnce(pool, record)).rejects.toMatchObject({ code: '22003' });
      // The refusal is logged at error level by design; keep this expected one out of the test output.
      const quiet = pino({ level: 'silent' });
      const stored = await storeRun({ pool, logger: quiet }, record);
      expect(stored.inserted).toBe(true);
      expect(stored.run).toMatchObject({
        result: 'error',
        countsForSite: false,
        latencyMs: null,
        outcome: null,
        evidence: 'was mismatch: wrong value on a normal-looking page',
      });
      expect(stored.run.reason).toMatch(
        joinRegExp(
          /^internal error: the run could not be stored \(value "2147483648" /,
          /is out of range for type integer\); recorded without its details$/,
        ),
      );
      // A retry of the same run finds the recorded one: once per run key, as always.
      expect(await storeRun({ pool, logger: quiet }, record)).toMatchObject({
        inserted: false,
        run: { result: 'error' },
      });
    },
  );

  test('bad input is refused', async () => {
    await expect(activities().runDueCanaries({ site: '' })).rejects.toThrow(
      /^runDueCanaries: site: must be a normalised host/,
    );
    await expect(activities().runDueCanaries({ site: 'a.example.com', asOf: 'yesterday' })).rejects.toThrow(
      /^runDueCanaries: asOf: must be an ISO-8601 time with a zone or epoch milliseconds$/,
    );
  });
});

describe('baseline trust: days on which canaries failed', () => {
  const day = (d: string, hh = '12') => new Date(`${d}T${hh}:00:00.000Z`);

  async function record(
    site: string,
    ranAt: Date,
    result: CanaryRunRecord['result'],
    countsForSite = true,
  ): Promise<void> {
    const iso = ranAt.toISOString();
    await recordCanaryRunOnce(pool, {
      runKey: `${site}/x/${iso}/${randomUUID()}`,
      canary: { id: `${site}/x`, site, revision: 1 },
      trigger: 'schedule',
      scheduledAt: iso,
      ranAt,
      result,
      countsForSite,
      outcome: result === 'pass' || result === 'mismatch' ? 'ok' : 'error',
      rule: 'status',
      reason: result,
      evidence: result,
      route: 'direct',
      status: 200,
      latencyMs: 10,
      bytes: 100,
      checks: [],
      event: null,
    });
  }

  test(
    'the default policy: ≥ 1 mismatch or ≥ 3 failures flags the whole UTC day; ' + 'configuration errors never count',
    async () => {
      const site = newSite();
      await record(site, day('2025-03-01', '23'), 'mismatch');
      await record(site, day('2025-03-02'), 'error');
      await record(site, day('2025-03-02'), 'blocked');
      for (const hh of ['01', '02', '23']) await record(site, day('2025-03-03', hh), hh === '02' ? 'blocked' : 'error');
      for (let i = 0; i < 5; i++) await record(site, day('2025-03-04'), 'error', false);
      await record(site, day('2025-03-05'), 'pass');
      await record(site, day('2025-03-06'), 'mismatch');

      expect(DEFAULT_BASELINE_TRUST).toEqual({ minMismatchedRuns: 1, minFailedRuns: 3 });
      // The range starts at noon on the 1st (the mismatch at 23:00 is in it) and ends at the 6th, exclusive.
      expect(await canaryFailedDays(pool, site, day('2025-03-01'), day('2025-03-06', '00'))).toEqual([
        '2025-03-01',
        '2025-03-03',
      ]);
      // A day the range only touches is judged as a whole: the range ends at 01:30 on the 3rd, the day still fails.
      expect(await canaryFailedDays(pool, site, day('2025-03-02', '00'), new Date('2025-03-03T01:30:00Z'))).toEqual([
        '2025-03-03',
      ]);
      expect(await canaryDays(pool, site, day('2025-03-01', '00'), day('2025-03-07', '00'))).toEqual([
        { day: '2025-03-01', runs: 1, failures: 0, mismatches: 1, failed: true },
        { day: '2025-03-02', runs: 2, failures: 2, mismatches: 0, failed: false },
        { day: '2025-03-03', runs: 3, failures: 3, mismatches: 0, failed: true },
        { day: '2025-03-05', runs: 1, failures: 0, mismatches: 0, failed: false },
        { day: '2025-03-06', runs: 1, failures: 0, mismatches: 1, failed: true },
      ]);
      // Policy is a parameter: stricter on failures, laxer on mismatches.
      expect(
        await canaryFailedDays(pool, site, day('2025-03-01', '00'), day('2025-03-07', '00'), {
          minMismatchedRuns: 2,
          minFailedRuns: 2,
        }),
      ).toEqual(['2025-03-02', '2025-03-03']);
      // Another site's runs and an empty range are nothing.
      expect(await canaryFailedDays(pool, newSite(), day('2025-03-01', '00'), day('2025-03-07', '00'))).toEqual([]);
      expect(await canaryFailedDays(pool, site, day('2025-03-03'), day('2025-03-03'))).toEqual([]);

      // Retention removes old runs, and with them the flags of those days.
      expect(await deleteCanaryRunsBefore(pool, day('2025-03-03', '00'))).toBeGreaterThanOrEqual(3);
      expect(await canaryFailedDays(pool, site, day('2025-03-01', '00'), day('2025-03-07', '00'))).toEqual([
        '2025-03-03',
        '2025-03-06',
      ]);
    },
  );
});
