/**
 * Canary fetches against a real local HTTP(S) server, directly and through a real local forward proxy
 * (absolute-URI requests for http://, CONNECT tunnels for https://). Each case must give the expected
 * result and reason, and through the proxy the proxy must have seen the request.
 */
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { parseCanaryDefinition } from '../../core/canaries/definition';
import { DEFAULT_REACH, parseReachPolicy, type ReachPolicy } from '../../core/canaries/reach';
import { selectorProblem } from '../../server/canary-runner/html';
import { runCanary, type CanaryRun } from '../../server/canary-runner/run-canary';
import type { CanarySettings } from '../../server/canary-runner/settings';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
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
  TEST_TLS,
} from '../kit/http-fixtures';
import { joinRegExp } from '../kit/regexp';

const TIMEOUT_MS = 1_000;
const SITE = 'shop.example.com';

function reach(allowed: string): ReachPolicy {
  const parsed = parseReachPolicy(allowed);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.policy;
}
/**
 * The fixture servers listen on 127.0.0.1: an operator's explicit opt-in, as TARGET_HEALTH_CANARY_ALLOWED_TARGETS would
 * give.
 */
const LOOPBACK = reach('127.0.0.1');

/** A price text with an emoji straddling the point where the shown value is cut (character ~117). */
const EMOJI_PRICE = `${'A'.repeat(116)}😀 now $119.95`;

const listing = (items: number) => {
  const results = Array.from(
    { length: items },
    (_, i) => `<li class="item"><a href="/p/${i}">Trail shoe ${i}</a> <span class="price">$${100 + i}.00</span></li>`,
  ).join('');
  const filler = '<p>Free shipping over $50. Returns within 30 days.</p>'.repeat(150);
  return (
    '<!doctype html><html><head><title>Trail shoes | Example Outdoor</title></head><body><main>' +
    `<ul class="results">${results}</ul>${filler}</main></body></html>`
  );
};

const routes = {
  '/p/known': answer.html(productPage()),
  '/p/changed': answer.html(productPage('$119.95')),
  '/p/blocked': answer.html(fixturePage('cloudflare-blocked.html')),
  '/p/refused': answer.html(fixturePage('akamai-access-denied.html'), 403),
  '/p/challenge': answer.html(fixturePage('cloudflare-just-a-moment.html'), 403, { 'cf-mitigated': 'challenge' }),
  '/p/slow': answer.slow(productPage(), 10_000),
  '/p/reset': answer.reset(),
  '/p/gzip': (_req: unknown, res: ServerResponse) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' })
      .end(gzipSync(productPage()));
  },
  '/p/moved': answer.redirect('/p/known-new', 301),
  '/api/product': answer.json({
    sku: 'TR-GTX4-M-42',
    offers: [{ price: 139.95, currency: 'USD' }],
    related: ['a', 'b', 'c'],
  }),
  '/api/product-changed': answer.json({
    sku: 'TR-GTX4-M-42',
    offers: [{ price: 99.95, currency: 'USD' }],
    related: [],
  }),
  '/c/trail': answer.html(listing(24)),
  '/c/trail-thin': answer.html(listing(3)),
  '/p/emoji': answer.html(productPage(EMOJI_PRICE)),
  '/p/nul': answer.html(
    '<!doctype html><title>Oops</title><p>Internal\u0000error while rendering \ud83d the page</p>',
    500,
  ),
  '/to-internal': answer.redirect('http://169.254.169.254/latest/meta-data/', 302),
  '/huge': (_req: unknown, res: ServerResponse) => {
    // 64 MB announced with a Content-Length and streamed with backpressure: a client that stops reading
    // stops the server writing, so `written` shows how much the canary really pulled.
    const head = Buffer.from(productPage());
    const filler = Buffer.alloc(64 * 1024, '<p>filler filler filler filler</p>');
    const total = head.length + 1024 * filler.length;
    let written = 0;
    huge = new Promise((resolve) => res.once('close', () => resolve({ written, total })));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(total) });
    res.write(head);
    written += head.length;
    let chunks = 0;
    const pump = (): void => {
      while (chunks < 1024 && !res.destroyed) {
        chunks += 1;
        written += filler.length;
        if (!res.write(filler)) {
          res.once('drain', pump);
          return;
        }
      }
      if (chunks >= 1024) res.end();
    };
    pump();
  },
};
let huge: Promise<{ written: number; total: number }> | undefined;

const PRODUCT_CHECKS = [
  { status: 200 },
  { css: '.price', equals: KNOWN_PRICE },
  { css: '.price', attr: 'content', between: [100, 200] },
  { absent: 'out of stock' },
];
const JSON_CHECKS = [
  { json: '/offers/0/price', equals: 139.95 },
  { json: '/related', atLeast: 2 },
];
const LISTING_CHECKS = [
  { css: 'ul.results li.item', count: 24 },
  { css: 'ul.results li.item', atLeast: 20 },
];

interface Case {
  name: string;
  path: string;
  checks: unknown[];
  result: CanaryRun['result'];
  outcome: string;
  reason: RegExp;
}

const CASES: Case[] = [
  {
    name: 'normal page with the known price',
    path: '/p/known',
    checks: PRODUCT_CHECKS,
    result: 'pass',
    outcome: 'ok',
    reason: /^status 200; all 3 checks hold$/,
  },
  {
    name: 'the same page with a changed price',
    path: '/p/changed',
    checks: PRODUCT_CHECKS,
    result: 'mismatch',
    outcome: 'ok',
    reason: /^wrong value on a normal-looking page: \.price text equals "\$139\.95", got "\$119\.95"$/,
  },
  {
    name: 'a block page served with 200',
    path: '/p/blocked',
    checks: PRODUCT_CHECKS,
    result: 'blocked',
    outcome: 'soft_block',
    reason: /^status 200 carrying a Cloudflare block page/,
  },
  {
    name: 'an Akamai refusal (403)',
    path: '/p/refused',
    checks: PRODUCT_CHECKS,
    result: 'blocked',
    outcome: 'hard_block',
    reason: /^status 403 refused by Akamai/,
  },
  {
    name: 'a Cloudflare challenge',
    path: '/p/challenge',
    checks: PRODUCT_CHECKS,
    result: 'blocked',
    outcome: 'challenge',
    reason: /^Cloudflare challenge on status 403/,
  },
  {
    name: 'a slow answer (beyond the timeout)',
    path: '/p/slow',
    checks: PRODUCT_CHECKS,
    result: 'error',
    outcome: 'error',
    reason: new RegExp(`^network error: timeout \\(no complete answer within ${TIMEOUT_MS} ms\\)$`),
  },
  {
    name: 'a gzip-compressed page',
    path: '/p/gzip',
    checks: PRODUCT_CHECKS,
    result: 'pass',
    outcome: 'ok',
    reason: /^status 200; all 3 checks hold$/,
  },
  {
    name: 'a moved page',
    path: '/p/moved',
    checks: PRODUCT_CHECKS,
    result: 'error',
    outcome: 'ok',
    reason: /^status 301, expected 200 \(redirect to \/p\/known-new; point the canary at the final URL\)$/,
  },
  {
    name: 'a JSON endpoint (pointer checks)',
    path: '/api/product',
    checks: JSON_CHECKS,
    result: 'pass',
    outcome: 'ok',
    reason: /^status 200; all 2 checks hold$/,
  },
  {
    name: 'a JSON endpoint with a changed value',
    path: '/api/product-changed',
    checks: JSON_CHECKS,
    result: 'mismatch',
    outcome: 'ok',
    reason: joinRegExp(
      /^wrong value on a normal-looking page: \/offers\/0\/price /,
      /equals 139\.95, got 99\.95 \(and 1 more of 2 checks\)$/,
    ),
  },
  {
    name: 'a listing with the known item count',
    path: '/c/trail',
    checks: LISTING_CHECKS,
    result: 'pass',
    outcome: 'ok',
    reason: /^status 200; all 2 checks hold$/,
  },
  {
    name: 'a cut-down listing',
    path: '/c/trail-thin',
    checks: LISTING_CHECKS,
    result: 'mismatch',
    outcome: 'ok',
    reason: joinRegExp(
      /^wrong value on a normal-looking page: ul\.results li\.item /,
      /count = 24, got 3 matches \(and 1 more of 2 checks\)$/,
    ),
  },
];

let http: FixtureServer;
let https: FixtureServer;
let proxy: ForwardProxy;

const settings = (over: Partial<CanarySettings> = {}): CanarySettings => ({
  userAgent: 'target-health-canary/test',
  timeoutMs: TIMEOUT_MS,
  connectTimeoutMs: 1_000,
  maxBodyBytes: 1024 * 1024,
  concurrency: 2,
  routes: new Map([['local-proxy', proxy.url]]),
  reach: LOOPBACK,
  ...over,
});

async function check(
  url: string,
  checks: unknown[],
  route: { route?: string; proxy?: string } = {},
  over: Partial<CanarySettings> = {},
): Promise<CanaryRun> {
  const parsed = parseCanaryDefinition({ name: 'case', url, ...route, expect: checks }, { selectorProblem });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return runCanary({
    site: SITE,
    definition: parsed.definition,
    settings: settings(over),
    runKey: `${SITE}/case/${Date.now()}`,
    ca: TEST_TLS.cert,
  });
}

beforeAll(async () => {
  [http, https, proxy] = await Promise.all([
    startFixtureServer(routes),
    startFixtureServer(routes, { tls: true }),
    startForwardProxy(),
  ]);
});
afterAll(async () => {
  await Promise.all([http.close(), https.close(), proxy.close()]);
});

const MODES = [
  { mode: 'direct', scheme: 'http', route: {} },
  { mode: 'through the proxy (absolute-URI)', scheme: 'http', route: { route: 'local-proxy' } },
  { mode: 'https through the proxy (CONNECT tunnel)', scheme: 'https', route: { route: 'local-proxy' } },
] as const;

describe.each(MODES)('$mode', ({ scheme, route }) => {
  test.each(CASES)('$name → $result ($outcome)', async (c) => {
    const origin = scheme === 'https' ? https.origin : http.origin;
    const seenBefore = proxy.seen.length;
    const hitsBefore = (scheme === 'https' ? https : http).hits(c.path);
    const run = await check(`${origin}${c.path}`, c.checks, route);

    expect({ result: run.result, outcome: run.outcome }).toEqual({ result: c.result, outcome: c.outcome });
    expect(run.reason).toMatch(c.reason);
    expect(run.evidence.length).toBeGreaterThan(0);
    expect(run.evidence.length).toBeLessThanOrEqual(500);
    expect(run.countsForSite).toBe(true);
    expect(run.route).toBe('route' in route ? 'route local-proxy' : 'direct');
    // The page server really answered (or was really waited for).
    expect((scheme === 'https' ? https : http).hits(c.path)).toBe(hitsBefore + 1);

    const seen = proxy.seen.slice(seenBefore);
    if (!('route' in route)) {
      expect(seen).toEqual([]);
    } else if (scheme === 'http') {
      expect(seen.map((s) => `${s.method} ${s.target}`)).toEqual([`GET ${http.origin}${c.path}`]);
      expect(seen[0]?.headers['user-agent']).toBe('target-health-canary/test');
    } else {
      expect(seen.map((s) => `${s.method} ${s.target}`)).toEqual([`CONNECT 127.0.0.1:${https.port}`]);
    }

    // The request-outcome event travels with it, valid for the signal store.
    const event = run.event;
    expect(event).not.toBeNull();
    const parsed = parseEvent(event);
    expect(parsed.ok).toBe(true);
    expect(event).toMatchObject({
      site: SITE,
      canary: true,
      outcome: c.outcome,
      route: 'route' in route ? { pool: 'local-proxy' } : {},
    });
    if (c.result === 'error' && c.outcome === 'error') expect(event).toMatchObject({ networkError: 'timeout' });
    else expect(event).toMatchObject({ status: run.status });
  });
});

describe('fetch limits and failures', () => {
  test('the configured user agent is sent', async () => {
    const before = http.requests.length;
    await check(
      `${http.origin}/p/known`,
      PRODUCT_CHECKS,
      {},
      { userAgent: 'Mozilla/5.0 (compatible; ExampleCrawler/2.1)' },
    );
    expect(http.requests.slice(before).map((r) => r.headers['user-agent'])).toEqual([
      'Mozilla/5.0 (compatible; ExampleCrawler/2.1)',
    ]);
  });

  test('reading stops at the body cap, and checks still run on what was read', async () => {
    const run = await check(`${http.origin}/huge`, PRODUCT_CHECKS, {}, { maxBodyBytes: 64 * 1024 });
    expect(run.result).toBe('pass');
    const sent = await huge!;
    // The connection was closed long before the server could send everything...
    expect(sent.written).toBeLessThan(sent.total / 4);
    // ...and the page's real size (Content-Length) is what the event reports, for size norms.
    expect(run.bytes).toBe(sent.total);
    expect(run.event).toMatchObject({ bytes: sent.total });
  });

  test('a connection reset is a block (hard_block), directly', async () => {
    const run = await check(`${http.origin}/p/reset`, PRODUCT_CHECKS);
    expect(run).toMatchObject({ result: 'blocked', outcome: 'hard_block' });
    expect(run.reason).toMatch(/^connection reset \(the site or its protection dropped the connection\)/);
  });

  test('a dead proxy is a route problem (network error: proxy), not the site', async () => {
    const dead = await startForwardProxy();
    const url = dead.url;
    await dead.close();
    const run = await check(`${http.origin}/p/known`, PRODUCT_CHECKS, { proxy: url });
    expect(run).toMatchObject({ result: 'error', outcome: 'error', route: `proxy 127.0.0.1:${dead.port}` });
    expect(run.reason).toMatch(/^network error: proxy failure \(a route problem, not the site\)/);
    expect(run.event).toMatchObject({ networkError: 'proxy', route: { pool: `127.0.0.1:${dead.port}` } });
  });

  test('proxy credentials from the URL are sent; wrong ones are a proxy failure', async () => {
    const authed = await startForwardProxy({ auth: { user: 'crawler', password: 's3cret pass' } });
    try {
      for (const origin of [http.origin, https.origin]) {
        const ok = await check(`${origin}/p/known`, PRODUCT_CHECKS, { proxy: authed.url });
        expect(ok.result).toBe('pass');
        expect(ok.route).toBe(`proxy 127.0.0.1:${authed.port}`);
        const wrong = await check(`${origin}/p/known`, PRODUCT_CHECKS, {
          proxy: authed.url.replace('s3cret%20pass', 'nope'),
        });
        expect(wrong).toMatchObject({ result: 'error', outcome: 'error' });
        expect(wrong.reason).toMatch(/^network error: proxy failure/);
      }
      expect(authed.seen.length).toBe(4);
    } finally {
      await authed.close();
    }
  });

  test('an untrusted certificate is a TLS error', async () => {
    const parsed = parseCanaryDefinition(
      { url: `${https.origin}/p/known`, expect: PRODUCT_CHECKS },
      { selectorProblem },
    );
    if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
    const run = await runCanary({ site: SITE, definition: parsed.definition, settings: settings(), runKey: 'k' });
    expect(run).toMatchObject({ result: 'error', outcome: 'error' });
    expect(run.reason).toMatch(/^network error: TLS handshake failed/);
  });

  test(
    'a route label unknown to this worker is a ' + 'configuration error that does not count against the site',
    async () => {
      const run = await check(`${http.origin}/p/known`, PRODUCT_CHECKS, { route: 'elsewhere' });
      expect(run).toMatchObject({
        result: 'error',
        outcome: null,
        countsForSite: false,
        event: null,
        route: 'route elsewhere',
      });
      expect(run.reason).toMatch(
        /^configuration: route label "elsewhere" is not in TARGET_HEALTH_ROUTES on this worker/,
      );
    },
  );
});

describe('a crawled page cannot break its own run', () => {
  test('an emoji where the shown value is cut: a recorded mismatch whose texts are all well formed', async () => {
    const run = await check(`${http.origin}/p/emoji`, PRODUCT_CHECKS);
    expect(run.result).toBe('mismatch');
    const texts = [
      run.reason,
      run.evidence,
      ...run.checks.flatMap((c) => [c.check, c.expected, c.actual, c.excerpt ?? '']),
    ];
    for (const text of texts) expect(isWellFormed(text)).toBe(true);
    // The shown value ends before the emoji, which is dropped whole rather than halved.
    const price = run.checks.find((c) => c.check === '.price text equals "$139.95"');
    expect(price?.actual).toBe(`"${'A'.repeat(116)}…"`);
  });

  test('a 500 page holding NUL and a lone surrogate: an error whose evidence is well formed', async () => {
    const run = await check(`${http.origin}/p/nul`, PRODUCT_CHECKS);
    expect(run).toMatchObject({ result: 'error', status: 500, reason: 'status 500 (server error)' });
    // NUL travels the wire; the lone surrogate became U+FFFD when the server encoded its answer.
    expect(run.evidence).toBe('status 500, title "Oops": Oops Internal\uFFFDerror while rendering \uFFFD the page');
    expect(isWellFormed(run.evidence)).toBe(true);
  });
});

describe('what canaries may reach (docs/canaries.md)', () => {
  test('without the operator opt-in, a loopback address is refused before anything is sent', async () => {
    const hits = http.hits('/p/known');
    const run = await check(`${http.origin}/p/known`, PRODUCT_CHECKS, {}, { reach: DEFAULT_REACH });
    expect(run).toMatchObject({ result: 'error', countsForSite: false, outcome: null, event: null, status: null });
    expect(run.reason).toBe(
      `configuration: url: "${http.origin}/p/known" is an IP address, not a page of ${SITE}; a canary may only ` +
        `fetch its own site (${SITE} or its subdomains) — an operator can allow this address with ` +
        `TARGET_HEALTH_CANARY_ALLOWED_TARGETS="127.0.0.1"`,
    );
    expect(http.hits('/p/known')).toBe(hits);
  });

  test(
    'a host name is checked where it is resolved: ' + '"localhost" allowed by name still may not reach 127.0.0.1',
    async () => {
      const hits = http.hits('/p/known');
      const run = await check(
        `http://localhost:${http.port}/p/known`,
        PRODUCT_CHECKS,
        {},
        { reach: reach('localhost') },
      );
      expect(run).toMatchObject({ result: 'error', countsForSite: false, event: null });
      expect(run.reason).toMatch(
        joinRegExp(
          /^configuration: url: localhost resolves to (127\.0\.0\.1|::1), a loopback address; canaries only reach /,
          /public addresses — an operator can allow it with TARGET_HEALTH_CANARY_ALLOWED_TARGETS="(127\.0\.0\.1|::1)"$/,
        ),
      );
      expect(http.hits('/p/known')).toBe(hits);
      // With the name and its addresses allowed, the same canary fetches.
      const allowed = await check(
        `http://localhost:${http.port}/p/known`,
        PRODUCT_CHECKS,
        {},
        { reach: reach('localhost, 127.0.0.0/8, ::1') },
      );
      expect(allowed.result).toBe('pass');
    },
  );

  test('a redirect towards an internal address is evidence, never followed', async () => {
    const seenBefore = proxy.seen.length;
    const run = await check(`${http.origin}/to-internal`, [{ status: 200 }]);
    expect(run.result).not.toBe('pass');
    expect(run.status).toBe(302);
    expect(run.reason).toContain('169.254.169.254');
    // Only the page server answered: nothing else was contacted (the proxy saw nothing either).
    expect(proxy.seen.length).toBe(seenBefore);
  });

  test('through a proxy the host rule still applies', async () => {
    const seenBefore = proxy.seen.length;
    const run = await check(
      'http://127.0.0.1:8233/api/v1/namespaces/default/workflows',
      [{ status: 200 }],
      { route: 'local-proxy' },
      { reach: DEFAULT_REACH },
    );
    expect(run).toMatchObject({ result: 'error', countsForSite: false, route: 'route local-proxy' });
    expect(run.reason).toMatch(
      joinRegExp(
        /^configuration: url: "http:\/\/127\.0\.0\.1:8233\/api\/v1\/namespaces\//,
        /default\/workflows" is an IP address, not a page of shop\.example\.com/,
      ),
    );
    expect(proxy.seen.length).toBe(seenBefore);
  });
});
