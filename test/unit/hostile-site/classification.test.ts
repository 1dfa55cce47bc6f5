/**
 * What each mode of the hostile site serves, judged by our own classifier (packages/crawler/src/events/classify.ts)
 * exactly as the store judges a crawler's event: status, headers, the body as sample, its size.
 */
import { classifyOutcome } from '@target-health/crawler/events';
import { CHALLENGE_KINDS, HARD_KINDS } from '../../../core/scenarios/pages';
import { startHostileSite, type HostileSite } from '../../../dev/hostile-site/site';
import { DEFAULT_PAGES, SOFT_PAGES, type Protection } from '../../../dev/hostile-site/modes';
import { direct, eventOf, extract } from './helpers';

let site: HostileSite;
beforeAll(async () => {
  site = await startHostileSite();
});
afterAll(async () => {
  await site.close();
});

const SHOP = 'shop.hostile.test';
const PATHS = ['/', '/list/1', '/list/10', '/item/1', '/item/77', '/item/200'];

describe('normal pages', () => {
  it.each(['shop.hostile.test', 'news.hostile.test', 'travel.hostile.test', 'calm.hostile.test'])(
    '%s: every page type classifies ok despite the vendor bait scripts, and yields records',
    async (host) => {
      for (const path of PATHS) {
        const answer = await direct(site.port, host, path);
        expect(answer.status).toBe(200);
        const verdict = classifyOutcome(eventOf(answer));
        expect({ path, outcome: verdict.outcome, reason: verdict.reason }).toEqual({
          path,
          outcome: 'ok',
          reason: 'status 200',
        });
        expect(extract(answer.body).records).toBeGreaterThan(0);
      }
    },
  );

  it('serves the same bytes for the same URL, and a bounded set of links', async () => {
    const a = await direct(site.port, SHOP, '/item/42');
    const b = await direct(site.port, SHOP, '/item/42');
    expect(a.body).toBe(b.body);
    expect(a.body).toMatch(/<title>[^<]+ 42 \| Northwind Outdoor<\/title>/);
    expect(a.body).toMatch(/class="price" data-price="\d+\.\d\d"/);
    const links = new Set<string>();
    for (const path of ['/', '/list/1', '/list/5', '/list/10', '/item/42'])
      for (const l of extract((await direct(site.port, SHOP, path)).body).links) links.add(l);
    // Every link stays inside the bounded catalogue: a crawl following them all meets no 404.
    expect(links.size).toBeGreaterThan(50);
    for (const l of links) expect(l).toMatch(/^\/$|^\/(list\/([1-9]|10)|item\/([1-9]\d?|1\d\d|200))$/);
  });

  it('answers unknown paths 404 and past-the-end items 404, robots.txt 200', async () => {
    expect((await direct(site.port, SHOP, '/item/201')).status).toBe(404);
    expect((await direct(site.port, SHOP, '/list/11')).status).toBe(404);
    expect((await direct(site.port, SHOP, '/item/007')).status).toBe(404);
    const robots = await direct(site.port, SHOP, '/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.body).toContain('User-agent: *');
  });
});

describe('challenges', () => {
  it.each(CHALLENGE_KINDS)('%s classifies as challenge', async (page) => {
    site.setMode(SHOP, { kind: 'challenging', share: 1, pages: [page] });
    const answer = await direct(site.port, SHOP, '/item/3');
    const verdict = classifyOutcome(eventOf(answer));
    expect({ page, outcome: verdict.outcome, rule: verdict.rule }).toEqual({
      page,
      outcome: 'challenge',
      rule: 'challenge_marker',
    });
    expect(answer.body).not.toContain('article class="product"');
  });

  it('the default Cloudflare challenge is the 403 interstitial with cf-mitigated', async () => {
    site.setMode(SHOP, { kind: 'challenging', share: 1 });
    const answer = await direct(site.port, SHOP, '/list/2');
    expect(answer.status).toBe(403);
    expect(answer.headers['cf-mitigated']).toBe('challenge');
    expect(answer.headers.server).toBe('cloudflare');
    expect(answer.body).toContain('<title>Just a moment...</title>');
  });
});

describe('soft blocks', () => {
  it.each(['unusual-traffic', 'perimeterx-denied-200'] as const)(
    '%s: a 200 the classifier calls soft_block by its content alone',
    async (page) => {
      site.setMode(SHOP, { kind: 'soft-block', share: 1, pages: [page] });
      const answer = await direct(site.port, SHOP, '/item/9');
      expect(answer.status).toBe(200);
      const verdict = classifyOutcome(eventOf(answer));
      expect({ outcome: verdict.outcome, rule: verdict.rule }).toEqual({ outcome: 'soft_block', rule: 'block_marker' });
    },
  );

  it('small-page: an empty shell, ok without a norm and soft_block against the size of the normal pages', async () => {
    site.setMode(SHOP, { kind: 'normal' });
    const sizes: number[] = [];
    for (let i = 1; i <= 25; i++) sizes.push(Buffer.byteLength((await direct(site.port, SHOP, `/item/${i}`)).body));
    sizes.sort((a, b) => a - b);
    const medianBytes = sizes[12]!;
    site.setMode(SHOP, { kind: 'soft-block', share: 1, pages: ['small-page'] });
    const answer = await direct(site.port, SHOP, '/item/30');
    expect(answer.status).toBe(200);
    expect(extract(answer.body).records).toBe(0);
    expect(classifyOutcome(eventOf(answer)).outcome).toBe('ok');
    const verdict = classifyOutcome(eventOf(answer, { pageType: 'product' }), {
      sizeNorm: { medianBytes, samples: 25 },
    });
    expect({ outcome: verdict.outcome, rule: verdict.rule }).toEqual({ outcome: 'soft_block', rule: 'size_norm' });
  });

  it('mixed: its challenges classify as challenge and its empty shells as soft_block by the size norm', async () => {
    site.setMode(SHOP, { kind: 'normal' });
    const sizes: number[] = [];
    for (let i = 1; i <= 25; i++) sizes.push(Buffer.byteLength((await direct(site.port, SHOP, `/item/${i}`)).body));
    sizes.sort((a, b) => a - b);
    const sizeNorm = { medianBytes: sizes[12]!, samples: 25 };
    site.setMode(SHOP, { kind: 'mixed', challengeShare: 0.5, softShare: 0.5, softPages: ['small-page'] });
    const verdicts = new Set<string>();
    for (let i = 1; i <= 30; i++) {
      const answer = await direct(site.port, SHOP, `/item/${i}`);
      const verdict = classifyOutcome(eventOf(answer, { pageType: 'product' }), { sizeNorm });
      verdicts.add(`${answer.status} ${verdict.outcome} ${verdict.rule}`);
    }
    expect(verdicts).toEqual(new Set(['403 challenge challenge_marker', '200 soft_block size_norm']));
  });

  it(
    'empty-records: the page layout without items, ' + 'soft_block by an empty extraction where listings yield records',
    async () => {
      site.setMode(SHOP, { kind: 'soft-block', share: 1, pages: ['empty-records'] });
      const answer = await direct(site.port, SHOP, '/list/3');
      expect(answer.status).toBe(200);
      expect(Buffer.byteLength(answer.body)).toBeGreaterThan(8192);
      expect(extract(answer.body).records).toBe(0);
      const verdict = classifyOutcome(
        eventOf(answer, { pageType: 'listing', extraction: { result: 'empty', validRecords: 0 } }),
        {
          recordsNorm: { usualRecordsRate: 1, samples: 40 },
        },
      );
      expect({ outcome: verdict.outcome, rule: verdict.rule }).toEqual({
        outcome: 'soft_block',
        rule: 'empty_extraction',
      });
    },
  );

  it.each([
    ['cloudflare', SHOP],
    ['datadome', 'news.hostile.test'],
    ['perimeterx', 'travel.hostile.test'],
    ['akamai', 'calm.hostile.test'],
  ] as [Protection, string][])(
    'the default soft page of a %s host (%s) is recognised by content',
    async (protection, host) => {
      expect(site.state(host).protection).toBe(protection);
      site.setMode(host, { kind: 'soft-block', share: 1 });
      const answer = await direct(site.port, host, '/item/5');
      expect(SOFT_PAGES).toContain(DEFAULT_PAGES[protection].soft);
      expect(answer.status).toBe(200);
      expect(classifyOutcome(eventOf(answer)).outcome).toBe('soft_block');
      site.setMode(host, { kind: 'normal' });
    },
  );
});

describe('walls', () => {
  it.each(HARD_KINDS.filter((k) => k !== 'connection-reset'))('%s classifies as hard_block', async (page) => {
    site.setMode(SHOP, { kind: 'wall', page });
    for (const path of ['/', '/item/1', '/robots.txt']) {
      const answer = await direct(site.port, SHOP, path);
      expect(answer.status).toBeGreaterThanOrEqual(403);
      const verdict = classifyOutcome(eventOf(answer));
      expect({ page, path, outcome: verdict.outcome }).toEqual({ page, path, outcome: 'hard_block' });
    }
  });

  it('the default wall of each host is a 403', async () => {
    for (const host of site.hosts) {
      site.setMode(host, { kind: 'wall' });
      expect((await direct(site.port, host, '/item/1')).status).toBe(403);
      site.setMode(host, { kind: 'normal' });
    }
  });

  it('connection-reset drops the connection: the client sees ECONNRESET', async () => {
    site.setMode(SHOP, { kind: 'wall', page: 'connection-reset' });
    await expect(direct(site.port, SHOP, '/item/1')).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(site.log(SHOP).at(-1)).toMatchObject({ served: 'reset', status: 0 });
    site.setMode(SHOP, { kind: 'normal' });
  });
});

describe('page sizes', () => {
  it(
    'every normal page and the empty listing are larger than shortPageBytes, so weak bait markers stay ' +
      'uncorroborated',
    async () => {
      const sizes: number[] = [];
      for (const host of site.hosts) {
        site.setMode(host, { kind: 'normal' });
        for (const path of PATHS) sizes.push(Buffer.byteLength((await direct(site.port, host, path)).body));
        site.setMode(host, { kind: 'soft-block', share: 1, pages: ['empty-records'] });
        const empty = await direct(site.port, host, '/list/1');
        sizes.push(Buffer.byteLength(empty.body));
        expect(classifyOutcome(eventOf(empty)).outcome).toBe('ok');
        site.setMode(host, { kind: 'normal' });
      }
      expect(Math.min(...sizes)).toBeGreaterThan(8192);
      expect(Math.max(...sizes)).toBeLessThan(64 * 1024);
    },
  );
});
