import { readFileSync } from 'node:fs';
import { join } from 'node:path';
/**
 * The adapter's pure parts: error mapping, route parsing, the per-site gate, event building, option
 * checks and the merge of the user's crawler options.
 */
import { buildEvent, checkExtraction } from '@target-health/crawler/crawlee/event-builder';
import { networkErrorOf } from '@target-health/crawler/crawlee/network-error';
import { CLASSIFIER_HEADERS } from '@target-health/crawler/crawlee/observe';
import { routeFromProxyInfo, routeFromUserName } from '@target-health/crawler/crawlee/route';
import { SiteGate } from '@target-health/crawler/crawlee/site-gate';
import { targetHealth, type CrawlerOptionsLike } from '@target-health/crawler/crawlee/adapter';
import type { ControlsView, SiteControls } from '@target-health/crawler/controls/types';
import type { Recorder } from '@target-health/crawler/recorder/recorder';

describe('networkErrorOf', () => {
  const cases: Array<[unknown, string]> = [
    [Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'connection_reset'],
    [new Error('read ECONNRESET'), 'connection_reset'],
    [new Error('page.goto: net::ERR_CONNECTION_RESET at http://x/'), 'connection_reset'],
    [Object.assign(new Error('Timeout awaiting socket'), { code: 'ETIMEDOUT' }), 'timeout'],
    [new Error('request timed out after 30 seconds.'), 'timeout'],
    [new Error('Proxy responded with 502 Bad Gateway: 0 bytes.'), 'proxy'],
    [new Error('net::ERR_TUNNEL_CONNECTION_FAILED'), 'proxy'],
    [Object.assign(new Error('getaddrinfo ENOTFOUND shop.test'), { code: 'ENOTFOUND' }), 'dns'],
    [new Error('net::ERR_NAME_NOT_RESOLVED'), 'dns'],
    [Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }), 'tls'],
    [new Error('Client network socket disconnected before secure TLS connection was established'), 'tls'],
    [new Error('something odd'), 'other'],
    ['ECONNRESET', 'connection_reset'],
    [undefined, 'other'],
    [{ message: 'wrapped', cause: { code: 'ENOTFOUND' } }, 'dns'],
  ];
  test.each(cases)('%p → %s', (err, kind) => expect(networkErrorOf(err)).toBe(kind));

  // Through a proxy the crawler's TCP connection goes to the proxy: refused there is a dead route.
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:41234'), { code: 'ECONNREFUSED' });
  test("a connection refused through a proxy is the proxy's; without one it is not", () => {
    expect(networkErrorOf(refused, true)).toBe('proxy');
    expect(networkErrorOf({ message: 'RequestError', cause: refused }, true)).toBe('proxy');
    expect(networkErrorOf(new Error('page.goto: net::ERR_PROXY_CONNECTION_FAILED at http://x/'), true)).toBe('proxy');
    expect(networkErrorOf(refused, false)).toBe('other');
    // A TLS failure through a proxy stays TLS (the tunnel was up; the site's handshake failed).
    expect(
      networkErrorOf(
        new Error('Client network socket disconnected before secure TLS connection was established'),
        true,
      ),
    ).toBe('tls');
  });
});

describe('routes from proxyInfo', () => {
  test('the short pool-country form', () =>
    expect(routeFromUserName('residential-de')).toEqual({ pool: 'residential', country: 'DE' }));
  test('a longer pool name', () =>
    expect(routeFromUserName('mobile-eu-fr')).toEqual({ pool: 'mobile-eu', country: 'FR' }));
  test('vendor keys', () => {
    expect(routeFromUserName('brd-customer-acme-zone-residential-country-de-session-abc')).toEqual({
      pool: 'residential',
      country: 'DE',
      session: 'sticky',
    });
    expect(routeFromUserName('customer-acme-cc-US')).toEqual({ country: 'US' });
  });
  test('a user name without a country is the pool', () =>
    expect(routeFromUserName('datacenter')).toEqual({ pool: 'datacenter' }));
  test('from the URL; host:port when the user name names no pool', () => {
    expect(routeFromProxyInfo({ url: 'http://residential-de:pw@127.0.0.1:8000' })).toEqual({
      pool: 'residential',
      country: 'DE',
    });
    expect(routeFromProxyInfo({ url: 'http://customer-x-cc-de:pw@proxy.example:9000' })).toEqual({
      country: 'DE',
      pool: 'proxy.example:9000',
    });
    expect(routeFromProxyInfo({ url: 'http://127.0.0.1:8000' })).toEqual({ pool: '127.0.0.1:8000' });
    expect(routeFromProxyInfo(undefined)).toEqual({});
  });
  test('nothing that is not a valid label', () => expect(routeFromUserName('bad name!')).toEqual({}));
});

describe('SiteGate', () => {
  test('admits up to the limit, then a waiter gets the place freed', async () => {
    const gate = new SiteGate();
    expect(await gate.acquire('a', 1, 0)).toEqual({ admitted: true, waited: false });
    expect(await gate.acquire('a', 1, 0)).toEqual({ admitted: false, waited: false });
    const waiting = gate.acquire('a', 1, 5_000);
    gate.release('a');
    expect(await waiting).toEqual({ admitted: true, waited: true });
    expect(gate.inFlight('a')).toBe(1);
    // Sites are separate.
    expect((await gate.acquire('b', 1, 0)).admitted).toBe(true);
  });
  test('a waiter gives up after its wait, leaving nothing held', async () => {
    const gate = new SiteGate();
    await gate.acquire('a', 1, 0);
    expect(await gate.acquire('a', 1, 30)).toEqual({ admitted: false, waited: true });
    gate.release('a');
    expect(gate.inFlight('a')).toBe(0);
  });
  test('a limit of 0 admits nobody', async () =>
    expect((await new SiteGate().acquire('a', 0, 100)).admitted).toBe(false));
});

describe('buildEvent', () => {
  const base = { ts: Date.now(), site: 'shop.example.com', route: {}, canary: false, retries: 0, latencyMs: 12.4 };
  test('a valid event', () => {
    const built = buildEvent({ ...base, status: 200, bodySample: '<html>', bytes: 6 });
    expect(built.ok && built.input).toMatchObject({ status: 200, latencyMs: 12, bodySample: '<html>' });
  });
  test('an invalid optional field is left out and named, the event kept', () => {
    const built = buildEvent({ ...base, status: 200, pageType: 'not a label!', route: { country: 'Germany' } });
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.input).not.toHaveProperty('pageType');
    expect(built.input).not.toHaveProperty('route');
    expect(built.removed.join('\n')).toMatch(/pageType/);
  });
  test('an event without a valid site is not recordable', () =>
    expect(buildEvent({ ...base, site: '', status: 200 }).ok).toBe(false));
});

test('checkExtraction names the field', () => {
  expect(checkExtraction({ result: 'ok', validRecords: 2 })).toEqual({ result: 'ok', validRecords: 2 });
  expect(() => checkExtraction({ result: 'fine' })).toThrow(
    /^targetHealth\.extraction: extraction\.result: must be one of ok/,
  );
});

test(
  'the Python package (Scrapy, crawlee-python) sends the same headers as the Crawlee adapter (the built-in ' +
    "markers' headers)",
  () => {
    const source = readFileSync(
      join(__dirname, '..', '..', '..', 'packages', 'python', 'src', 'target_health', 'events.py'),
      'utf8',
    );
    const tuple = /^CLASSIFIER_HEADERS = \(([^)]*)\)/m.exec(source)?.[1] ?? '';
    expect([...tuple.matchAll(/"([^"]+)"/g)].map((m) => m[1]).sort()).toEqual([...CLASSIFIER_HEADERS].sort());
  },
);

test('the headers sent are those the built-in markers read', () => {
  expect([...CLASSIFIER_HEADERS].sort()).toEqual([
    'cf-mitigated',
    'location',
    'server',
    'set-cookie',
    'x-amzn-waf-action',
    'x-cachewall-action',
    'x-datadome',
    'x-iinfo',
    'x-kpsdk-ct',
    'x-vercel-mitigated',
  ]);
});

const recorder = {
  record: () => true,
  drain: () => Promise.resolve(),
  stats: () => ({ dropped: 0 }),
} as unknown as Recorder;

describe('targetHealth options', () => {
  test('a bad option is one line naming it', () => {
    expect(() => targetHealth({ recorder, pauseDelayMs: -1 })).toThrow(
      'targetHealth: pauseDelayMs: must be at least 0',
    );
    expect(() => targetHealth({ recorder, pauseDelay: 5 } as never)).toThrow(
      'targetHealth: pauseDelay: unknown option',
    );
    expect(() => targetHealth({} as never)).toThrow(/^targetHealth: recorder: must be a Recorder/);
  });

  test('crawlerOptions keeps the user options and hooks, and takes over blocked and 5xx statuses', () => {
    const th = targetHealth({ recorder });
    const pre = () => undefined;
    const post = () => undefined;
    const handler = () => undefined;
    const merged = th.crawlerOptions<
      CrawlerOptionsLike & { maxConcurrency: number; ignoreHttpErrorStatusCodes?: number[] }
    >({
      maxConcurrency: 3,
      preNavigationHooks: [pre],
      postNavigationHooks: [post],
      requestHandler: handler,
      sessionPoolOptions: { maxPoolSize: 5, blockedStatusCodes: [403] },
      ignoreHttpErrorStatusCodes: [503],
    });
    const m = merged as unknown as Record<string, unknown> & {
      preNavigationHooks: unknown[];
      postNavigationHooks: unknown[];
      ignoreHttpErrorStatusCodes: number[];
    };
    expect(m.maxConcurrency).toBe(3);
    expect(m.sessionPoolOptions).toEqual({ maxPoolSize: 5, blockedStatusCodes: [] });
    expect(m.preNavigationHooks).toHaveLength(3);
    expect(m.preNavigationHooks[1]).toBe(pre);
    expect(m.postNavigationHooks).toHaveLength(2);
    expect(m.postNavigationHooks[1]).toBe(post);
    expect(m.requestHandler).not.toBe(handler);
    expect(typeof m.errorHandler).toBe('function');
    expect(typeof m.failedRequestHandler).toBe('function');
    expect([...m.ignoreHttpErrorStatusCodes].sort()).toEqual(Array.from({ length: 100 }, (_, i) => 500 + i));
    expect(m.additionalHttpErrorStatusCodes).toEqual([]);
  });

  test('for a browser crawler no HTTP-crawler option is added (Crawlee refuses unknown options)', () => {
    const merged = targetHealth({ recorder }).crawlerOptions<CrawlerOptionsLike>({}, 'browser') as Record<
      string,
      unknown
    >;
    expect(merged).not.toHaveProperty('ignoreHttpErrorStatusCodes');
    expect(merged).not.toHaveProperty('additionalHttpErrorStatusCodes');
  });

  test('controlsFor gives the scheduler hints, with defaults for unknown sites', () => {
    const record: SiteControls = {
      site: 'shop.example.com',
      concurrencyLimit: 2,
      revisitMultiplier: 2.5,
      paused: false,
      canaryOnly: false,
      effectiveCostMultiplier: 1.4,
      band: 'degrading',
      reason: 'r',
      version: 3,
      updatedAt: new Date().toISOString(),
    };
    const controls: ControlsView = {
      controlsFor: (s) => (s === 'shop.example.com' ? record : undefined),
      onChange: () => () => undefined,
    };
    const th = targetHealth({ recorder, controls });
    expect(th.controlsFor('https://Shop.Example.com/p/1')).toMatchObject({
      site: 'shop.example.com',
      revisitMultiplier: 2.5,
      effectiveCostMultiplier: 1.4,
      concurrencyLimit: 2,
      stopped: false,
    });
    expect(th.controlsFor('other.example.com')).toMatchObject({
      revisitMultiplier: 1,
      effectiveCostMultiplier: 1,
      paused: false,
      controls: undefined,
    });
    expect(targetHealth({ recorder, controls, unknownSite: 'pause' }).controlsFor('other.example.com')?.paused).toBe(
      true,
    );
  });
});
