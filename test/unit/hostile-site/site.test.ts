/**
 * The hostile site's controls, log and admin endpoint, over real sockets on loopback. Time is an injected
 * clock: ramps move when the test moves it, never by sleeping.
 */
import { startHostileSite, type HostileSite } from '../../../dev/hostile-site/site';
import type { AccessLogEntry } from '../../../dev/hostile-site/access-log';
import { admin, direct, json } from './helpers';

const SHOP = 'shop.hostile.test';
const NEWS = 'news.hostile.test';

let now = 1_750_000_000_000;
let site: HostileSite;
beforeAll(async () => {
  site = await startHostileSite({ clock: () => now, seed: 7 });
});
afterAll(async () => {
  await site.close();
});
beforeEach(() => {
  for (const host of site.hosts) {
    site.setMode(host, { kind: 'normal' });
    for (const route of Object.keys(site.state(host).blockedRoutes)) site.unblockRoute(host, route);
  }
});

describe('modes', () => {
  it('a share of requests is refused: none at 0, all at 1, about that share in between', async () => {
    const refusedOf = async (share: number, n: number): Promise<number> => {
      site.setMode(SHOP, { kind: 'challenging', share });
      let refused = 0;
      for (let i = 0; i < n; i++)
        if ((await direct(site.port, SHOP, `/item/${(i % 200) + 1}`)).status === 403) refused++;
      return refused;
    };
    expect(await refusedOf(0, 50)).toBe(0);
    expect(await refusedOf(1, 50)).toBe(50);
    const some = await refusedOf(0.3, 600);
    // Seeded draws: the same count every run; the bound says the share is honoured.
    expect(some).toBeGreaterThan(0.25 * 600);
    expect(some).toBeLessThan(0.35 * 600);
  });

  it('mixed: one draw per request gives a challenge, a soft block or the page, each about its share', async () => {
    site.setMode(SHOP, { kind: 'mixed', challengeShare: 0.2, softShare: 0.1, softPages: ['small-page'] });
    const since = (now += 1000);
    for (let i = 0; i < 600; i++) await direct(site.port, SHOP, `/item/${(i % 200) + 1}`);
    const entries = site.log(SHOP, { since });
    const count = (served: string) => entries.filter((e) => e.served === served).length;
    // Seeded draws: the same counts every run; the bounds say each share is honoured and they do not overlap.
    expect(count('challenge')).toBeGreaterThan(0.15 * 600);
    expect(count('challenge')).toBeLessThan(0.25 * 600);
    expect(count('soft-block')).toBeGreaterThan(0.06 * 600);
    expect(count('soft-block')).toBeLessThan(0.14 * 600);
    expect(count('page')).toBe(600 - count('challenge') - count('soft-block'));
    // The host's default challenge (403) and the requested soft page (a 200 without the catalogue's items).
    expect(new Set(entries.filter((e) => e.served === 'challenge').map((e) => `${e.status} ${e.page}`))).toEqual(
      new Set(['403 cloudflare-challenge']),
    );
    expect(new Set(entries.filter((e) => e.served === 'soft-block').map((e) => `${e.status} ${e.page}`))).toEqual(
      new Set(['200 small-page']),
    );
    expect(new Set(entries.map((e) => e.mode))).toEqual(new Set(['mixed']));
  });

  it(
    'mixed: the shares are disjoint — ' + 'all challenged at 1, all soft-blocked at 1, nothing served at 0.5 + 0.5',
    async () => {
      const servedOf = async (challengeShare: number, softShare: number): Promise<Set<string>> => {
        site.setMode(SHOP, { kind: 'mixed', challengeShare, softShare });
        const since = (now += 1000);
        for (let i = 0; i < 40; i++) await direct(site.port, SHOP, `/item/${i + 1}`);
        return new Set(site.log(SHOP, { since }).map((e) => e.served));
      };
      expect(await servedOf(1, 0)).toEqual(new Set(['challenge']));
      expect(await servedOf(0, 1)).toEqual(new Set(['soft-block']));
      expect(await servedOf(0.5, 0.5)).toEqual(new Set(['challenge', 'soft-block']));
      expect(await servedOf(0, 0)).toEqual(new Set(['page']));
      // robots.txt escapes it, as it escapes the other share-based modes.
      site.setMode(SHOP, { kind: 'mixed', challengeShare: 0.5, softShare: 0.5 });
      expect((await direct(site.port, SHOP, '/robots.txt')).status).toBe(200);
    },
  );

  it('mixed: refuses shares adding up to more than 1, naming the field, and keeps the old mode', () => {
    site.setMode(SHOP, { kind: 'mixed', challengeShare: 0.15, softShare: 0.1, latencyMs: 5 });
    expect(() => site.setMode(SHOP, { kind: 'mixed', challengeShare: 0.6, softShare: 0.5 })).toThrow(
      /^mode\.softShare: challengeShare \+ softShare must be at most 1/,
    );
    expect(() => site.setMode(SHOP, { kind: 'mixed', challengeShare: 0.2 } as never)).toThrow(/^mode\.softShare: /);
    expect(site.modeOf(SHOP)).toEqual({ kind: 'mixed', challengeShare: 0.15, softShare: 0.1, latencyMs: 5 });
  });

  it('robots.txt escapes share-based refusals but not a wall', async () => {
    site.setMode(SHOP, { kind: 'challenging', share: 1 });
    expect((await direct(site.port, SHOP, '/robots.txt')).status).toBe(200);
    site.setMode(SHOP, { kind: 'wall' });
    expect((await direct(site.port, SHOP, '/robots.txt')).status).toBe(403);
  });

  it('slow answers after at least latencyMs, and the log says so', async () => {
    site.setMode(SHOP, { kind: 'slow', latencyMs: 150 });
    const started = performance.now();
    const answer = await direct(site.port, SHOP, '/item/4');
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(148);
    expect(site.log(SHOP).at(-1)).toMatchObject({ path: '/item/4', mode: 'slow', latencyMs: 150, served: 'page' });
  });

  it('modes are per host', async () => {
    site.setMode(SHOP, { kind: 'wall' });
    expect((await direct(site.port, SHOP, '/')).status).toBe(403);
    expect((await direct(site.port, NEWS, '/')).status).toBe(200);
  });

  it('refuses an invalid mode with the field named, and keeps the old one', () => {
    site.setMode(SHOP, { kind: 'challenging', share: 0.2 });
    expect(() => site.setMode(SHOP, { kind: 'challenging', share: 2 })).toThrow(/^mode\.share: .*from 0 to 1/);
    expect(() => site.setMode('nowhere.test', { kind: 'normal' })).toThrow(/^host: unknown host "nowhere.test"/);
    expect(site.modeOf(SHOP)).toEqual({ kind: 'challenging', share: 0.2 });
  });

  it('an unknown Host is not served (421) and not logged', async () => {
    const before = site.hosts.map((h) => site.log(h).length);
    expect((await direct(site.port, 'elsewhere.test', '/')).status).toBe(421);
    expect(site.hosts.map((h) => site.log(h).length)).toEqual(before);
  });
});

describe('ramp', () => {
  it('moves through its steps at their times on the site clock', async () => {
    const start = now;
    site.turnHostile({
      host: SHOP,
      steps: [
        { afterMs: 60_000, mode: { kind: 'challenging', share: 1 } },
        { afterMs: 120_000, mode: { kind: 'soft-block', share: 1 } },
        { afterMs: 180_000, mode: { kind: 'wall' } },
      ],
    });
    const served = async (): Promise<string> => {
      await direct(site.port, SHOP, '/item/1');
      const last = site.log(SHOP).at(-1)!;
      return `${last.mode}/${last.served}`;
    };
    expect(await served()).toBe('normal/page');
    now = start + 59_999;
    expect(await served()).toBe('normal/page');
    now = start + 60_000;
    expect(await served()).toBe('challenging/challenge');
    now = start + 150_000;
    expect(await served()).toBe('soft-block/soft-block');
    expect(site.state(SHOP).ramp?.steps).toHaveLength(3);
    now = start + 180_000;
    expect(await served()).toBe('wall/wall');
    // Finished: folded into the plain mode.
    expect(site.state(SHOP).ramp).toBeUndefined();
    expect(site.modeOf(SHOP)).toEqual({ kind: 'wall' });
  });

  it('setMode cancels a ramp in progress', () => {
    const start = now;
    site.turnHostile({ host: SHOP, steps: [{ afterMs: 1000, mode: { kind: 'wall' } }] });
    site.setMode(SHOP, { kind: 'slow', latencyMs: 5 });
    now = start + 5000;
    expect(site.modeOf(SHOP)).toEqual({ kind: 'slow', latencyMs: 5 });
  });

  it('refuses a bad ramp, naming the step', () => {
    expect(() => site.turnHostile({ host: SHOP, steps: [{ afterMs: -1, mode: { kind: 'normal' } }] })).toThrow(
      /^ramp\.steps\[0\]\.afterMs: /,
    );
    expect(() => site.turnHostile({ host: SHOP, steps: [] })).toThrow(
      /^ramp\.steps: must be a list of at least one step/,
    );
  });
});

describe('access log', () => {
  it(
    'records what was served, to which route, ' + 'and canaries by header, query or the canary runner user agent',
    async () => {
      const since = (now += 1000);
      await direct(site.port, NEWS, '/item/1', { 'user-agent': 'crawler/1.0' });
      await direct(site.port, NEWS, '/item/2', { 'x-th-canary': '1' });
      await direct(site.port, NEWS, '/item/3?th-canary=1');
      await direct(site.port, NEWS, '/item/4', { 'user-agent': 'target-health-canary/9.9 (known-answer page check)' });
      await direct(site.port, NEWS, '/item/999', { 'x-th-route': 'dc-us' });
      const entries = site.log(NEWS, { since });
      expect(entries.map((e: AccessLogEntry) => [e.path, e.status, e.served, e.route, e.canary])).toEqual([
        ['/item/1', 200, 'page', 'direct', false],
        ['/item/2', 200, 'page', 'direct', true],
        ['/item/3?th-canary=1', 200, 'page', 'direct', true],
        ['/item/4', 200, 'page', 'direct', true],
        ['/item/999', 404, 'not-found', 'dc-us', false],
      ]);
      expect(entries[0]).toMatchObject({ ts: since, method: 'GET', userAgent: 'crawler/1.0', mode: 'normal' });
      expect(site.log(NEWS, { since, canary: false }).map((e) => e.path)).toEqual(['/item/1', '/item/999']);
      expect(site.summary(NEWS, { since })).toMatchObject({
        total: 5,
        canary: 3,
        production: 2,
        byStatus: { '200': 4, '404': 1 },
        byRoute: { direct: 4, 'dc-us': 1 },
      });
    },
  );

  it('counts requests per window on the site clock', async () => {
    now += 600_000;
    const t0 = now;
    for (let s = 0; s < 10; s++) {
      now = t0 + s * 1000;
      for (let i = 0; i < s + 1; i++) await direct(site.port, SHOP, '/list/1');
    }
    // now = t0 + 9 s: the last second holds the 10 requests made at t0 + 9 s; the last 3 s hold 8 + 9 + 10.
    expect(site.rate(SHOP, 1000)).toEqual({ count: 10, windowMs: 1000, perSecond: 10 });
    expect(site.rate(SHOP, 3000)).toEqual({ count: 27, windowMs: 3000, perSecond: 9 });
    expect(site.rate(SHOP, 60_000).count).toBe(55);
    expect(site.rate(SHOP, 60_000, { canary: true }).count).toBe(0);
  });

  it('stays bounded, counting what it dropped', async () => {
    const small = await startHostileSite({ hosts: [{ name: 'tiny.hostile.test' }], maxLogEntries: 8 });
    try {
      for (let i = 1; i <= 25; i++) await direct(small.port, 'tiny.hostile.test', `/item/${i}`);
      const kept = small.log('tiny.hostile.test');
      expect(kept.length).toBeLessThanOrEqual(10);
      expect(kept.length + small.dropped('tiny.hostile.test')).toBe(25);
      expect(kept.at(-1)?.path).toBe('/item/25');
    } finally {
      await small.close();
    }
  });
});

describe('admin endpoint', () => {
  it('sets a mode, a ramp and a route block, and reports the state', async () => {
    const set = await admin(site.port, 'POST', `/_admin/hosts/${SHOP}/mode`, {
      kind: 'soft-block',
      share: 0.5,
      pages: ['small-page'],
    });
    expect(set.status).toBe(200);
    expect(site.modeOf(SHOP)).toEqual({ kind: 'soft-block', share: 0.5, pages: ['small-page'] });
    const ramp = await admin(site.port, 'POST', `/_admin/hosts/${SHOP}/ramp`, {
      steps: [{ afterMs: 10_000, mode: { kind: 'wall' } }],
    });
    expect(json<{ ramp: { startedAt: number } }>(ramp).ramp.startedAt).toBe(now);
    const block = await admin(site.port, 'POST', `/_admin/hosts/${SHOP}/blocked-routes`, { route: 'dc-de' });
    expect(json<{ blockedRoutes: Record<string, string> }>(block).blockedRoutes).toEqual({
      'dc-de': 'cloudflare-block',
    });
    const hosts = json<{ hosts: { host: string }[] }>(await admin(site.port, 'GET', '/_admin/hosts'));
    expect(hosts.hosts.map((h) => h.host)).toEqual(site.hosts);
    await admin(site.port, 'POST', `/_admin/hosts/${SHOP}/blocked-routes`, { route: 'dc-de', blocked: false });
    expect(site.state(SHOP).blockedRoutes).toEqual({});
  });

  it('serves the log, summary and rate as JSON', async () => {
    const since = (now += 1000);
    await direct(site.port, SHOP, '/item/8', { 'x-th-route': 'resi-fr' });
    const log = json<{ entries: AccessLogEntry[]; dropped: number }>(
      await admin(site.port, 'GET', `/_admin/log?host=${SHOP}&since=${since}`),
    );
    expect(log.entries.map((e) => [e.path, e.route])).toEqual([['/item/8', 'resi-fr']]);
    expect(log.dropped).toBe(0);
    const summary = json<{ total: number }>(
      await admin(site.port, 'GET', `/_admin/summary?host=${SHOP}&since=${since}&route=resi-fr&canary=false`),
    );
    expect(summary.total).toBe(1);
    const rate = json<{ count: number }>(await admin(site.port, 'GET', `/_admin/rate?host=${SHOP}&windowMs=1`));
    expect(rate.count).toBe(1);
  });

  it.each([
    ['a share out of range', `/_admin/hosts/${SHOP}/mode`, { kind: 'challenging', share: 1.5 }, /^share: /],
    ['a missing share', `/_admin/hosts/${SHOP}/mode`, { kind: 'soft-block' }, /^share: /],
    ['an unknown kind', `/_admin/hosts/${SHOP}/mode`, { kind: 'angry' }, /^kind: /],
    [
      'mixed shares above 1',
      `/_admin/hosts/${SHOP}/mode`,
      { kind: 'mixed', challengeShare: 0.7, softShare: 0.4 },
      /^softShare: challengeShare \+ softShare must be at most 1/,
    ],
    [
      'a mixed soft page that is a challenge',
      `/_admin/hosts/${SHOP}/mode`,
      { kind: 'mixed', challengeShare: 0.1, softShare: 0.1, softPages: ['cloudflare-challenge'] },
      /^softPages\[0\]: /,
    ],
    ['an unknown field', `/_admin/hosts/${SHOP}/mode`, { kind: 'normal', latency: 5 }, /latency/],
    [
      'an unknown page',
      `/_admin/hosts/${SHOP}/mode`,
      { kind: 'wall', page: 'cloudflare' },
      /^page: .*cloudflare-block/,
    ],
    [
      'a negative step time',
      `/_admin/hosts/${SHOP}/ramp`,
      { steps: [{ afterMs: -5, mode: { kind: 'wall' } }] },
      /^steps\[0\]\.afterMs: /,
    ],
    [
      'a bad mode inside a ramp',
      `/_admin/hosts/${SHOP}/ramp`,
      { steps: [{ afterMs: 0, mode: { kind: 'slow' } }] },
      /^steps\[0\]\.mode\.latencyMs: /,
    ],
    ['a route block without a route', `/_admin/hosts/${SHOP}/blocked-routes`, { blocked: true }, /^route: /],
  ])('rejects %s with a 400 naming the field, changing nothing', async (_what, path, body, message) => {
    site.setMode(SHOP, { kind: 'slow', latencyMs: 1 });
    const answer = await admin(site.port, 'POST', path, body);
    expect(answer.status).toBe(400);
    expect(json<{ error: string }>(answer).error).toMatch(message);
    expect(site.state(SHOP)).toMatchObject({
      mode: { kind: 'slow', latencyMs: 1 },
      ramp: undefined,
      blockedRoutes: {},
    });
  });

  it('rejects bad JSON, bad queries, unknown hosts and paths', async () => {
    const bad = await admin(site.port, 'POST', `/_admin/hosts/${SHOP}/mode`, undefined, '{"kind": ');
    expect([bad.status, json<{ error: string }>(bad).error]).toEqual([400, 'body: not valid JSON']);
    const since = await admin(site.port, 'GET', `/_admin/log?host=${SHOP}&since=yesterday`);
    expect([since.status, json<{ error: string }>(since).error]).toEqual([400, expect.stringMatching(/^since: /)]);
    const windowMs = await admin(site.port, 'GET', `/_admin/rate?host=${SHOP}`);
    expect([windowMs.status, json<{ error: string }>(windowMs).error]).toEqual([
      400,
      expect.stringMatching(/^windowMs: /),
    ]);
    const host = await admin(site.port, 'POST', '/_admin/hosts/nowhere.test/mode', { kind: 'normal' });
    expect([host.status, json<{ error: string }>(host).error]).toEqual([
      404,
      expect.stringMatching(/^host: unknown host "nowhere.test"/),
    ]);
    expect((await admin(site.port, 'GET', '/_admin/nothing')).status).toBe(404);
    // Never on a virtual host: a crawler cannot stumble on it.
    expect((await direct(site.port, SHOP, '/_admin/hosts')).status).toBe(404);
  });
});

describe('closing', () => {
  it('close() ends kept-alive and pending slow connections at once', async () => {
    const own = await startHostileSite({
      hosts: [{ name: 'slow.hostile.test', mode: { kind: 'slow', latencyMs: 60_000 } }],
    });
    const pending = direct(own.port, 'slow.hostile.test', '/');
    // Wait until the request has arrived (it is logged on arrival), then close.
    while (own.log('slow.hostile.test').length === 0) await new Promise((r) => setImmediate(r));
    await own.close();
    await expect(pending).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});

describe('configuration', () => {
  it('refuses an unknown theme and a duplicate host, naming them', async () => {
    await expect(startHostileSite({ hosts: [{ name: 'a.hostile.test', theme: 'toString' }] })).rejects.toThrow(
      /^hosts: theme "toString" of a.hostile.test is unknown; use one of shop, news, travel, books$/,
    );
    await expect(startHostileSite({ hosts: [{ name: 'a.hostile.test' }, { name: 'A.hostile.test' }] })).rejects.toThrow(
      /^hosts: "a.hostile.test" is listed twice$/,
    );
  });
});
