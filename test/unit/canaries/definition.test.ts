import {
  type CanaryDefinition,
  definitionToJson,
  INTERVAL_LIMITS,
  nameFromUrl,
  type DefinitionOptions,
  parseCanaryDefinition as parseWith,
  parseCanaryFile as parseFileWith,
  readStoredDefinition,
} from '../../../core/canaries/definition';
import { parseReachPolicy } from '../../../core/canaries/reach';
import { parseRouteTable } from '../../../core/canaries/routes';
import { selectorProblem } from '../../../server/canary-runner/html';

// Definitions are always checked with the selector engine that evaluates them (cheerio, as in the CLI).
const parseCanaryDefinition = (input: unknown, options: Omit<DefinitionOptions, 'selectorProblem'> = {}) =>
  parseWith(input, { selectorProblem, ...options });
const parseCanaryFile = (input: unknown, options: Omit<DefinitionOptions, 'selectorProblem'> = {}) =>
  parseFileWith(input, { selectorProblem, ...options });

const routes = new Map([['residential-de', 'http://user:secret@gw.proxy.example:8000']]);

const valid = {
  name: 'price-trailrunner',
  url: 'https://shop.example.com/p/trailrunner-gtx-4',
  route: 'residential-de',
  interval: '15m',
  expect: [
    { status: 200 },
    { css: '.price', equals: '$139.95' },
    { css: '.price', attr: 'content', between: [100, 200] },
    { css: '.product-title', matches: '^Trailrunner' },
    { css: '.review', atLeast: 1 },
    { css: 'nav.breadcrumbs a', count: 3 },
    { json: '/offers/price', equals: '139.95' },
    { absent: 'Out of stock' },
  ],
};

function errorsOf(
  input: unknown,
  withRoutes = true,
  extra: Omit<DefinitionOptions, 'selectorProblem' | 'routes'> = {},
): string[] {
  const result = parseCanaryDefinition(input, withRoutes ? { routes, ...extra } : extra);
  if (result.ok) throw new Error('expected the definition to be refused');
  return result.errors;
}

describe('canary definitions', () => {
  test('a full definition parses into the discriminated form', () => {
    const result = parseCanaryDefinition(valid, { routes });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const d: CanaryDefinition = result.definition;
    expect(d).toMatchObject({ name: 'price-trailrunner', route: 'residential-de', intervalMs: 15 * 60_000 });
    expect(d.expect).toEqual([
      { kind: 'status', statuses: [200] },
      { kind: 'css', selector: '.price', assert: { op: 'equals', value: '$139.95' } },
      { kind: 'css', selector: '.price', attr: 'content', assert: { op: 'between', min: 100, max: 200 } },
      { kind: 'css', selector: '.product-title', assert: { op: 'matches', pattern: '^Trailrunner' } },
      { kind: 'css', selector: '.review', assert: { op: 'atLeast', n: 1 } },
      { kind: 'css', selector: 'nav.breadcrumbs a', assert: { op: 'count', n: 3 } },
      { kind: 'json', pointer: '/offers/price', assert: { op: 'equals', value: '139.95' } },
      { kind: 'absent', text: 'Out of stock' },
    ]);
  });

  test('the JSON form round-trips (what PostgreSQL stores is accepted again unchanged)', () => {
    const first = parseCanaryDefinition(valid, { routes });
    if (!first.ok) throw new Error(first.errors.join('\n'));
    const json = definitionToJson(first.definition);
    expect(json).toEqual({ ...valid, interval: '15m' });
    const again = readStoredDefinition(JSON.parse(JSON.stringify(json)));
    expect(again).toEqual(first);
  });

  test('defaults: name from the URL path, interval 15m, direct route', () => {
    const result = parseCanaryDefinition({
      url: 'https://shop.example.com/c/Men/Shoes?page=2',
      expect: [{ css: 'li', atLeast: 1 }],
    });
    expect(result).toMatchObject({
      ok: true,
      definition: { name: 'c-men-shoes', intervalMs: INTERVAL_LIMITS.defaultMs },
    });
    if (result.ok) {
      expect(result.definition.route).toBeUndefined();
      expect(result.definition.proxy).toBeUndefined();
    }
    expect(nameFromUrl('https://shop.example.com/')).toBe('home');
  });

  test('intervals: durations or seconds; zero, negative, garbage and out-of-range values are refused', () => {
    const base = { url: 'https://a.example.com/', expect: [{ status: 200 }] };
    expect(parseCanaryDefinition({ ...base, interval: 90 })).toMatchObject({
      ok: true,
      definition: { intervalMs: 90_000 },
    });
    expect(parseCanaryDefinition({ ...base, interval: '1h' })).toMatchObject({
      ok: true,
      definition: { intervalMs: 3_600_000 },
    });
    expect(errorsOf({ ...base, interval: '-5m' })).toEqual([
      'interval: must be a positive duration like "15m" (got "-5m")',
    ]);
    expect(errorsOf({ ...base, interval: -60 })).toEqual([
      'interval: must be a positive duration like "15m" (got -60)',
    ]);
    expect(errorsOf({ ...base, interval: '0s' })).toEqual([
      'interval: must be a positive duration like "15m" (got "0s")',
    ]);
    expect(errorsOf({ ...base, interval: 'often' })).toEqual([
      'interval: "often" is not a duration; write it like "15m", "1h", "90s" (or a number of seconds)',
    ]);
    expect(errorsOf({ ...base, interval: '5s' })).toEqual(['interval: must be between 30s and 7d (got "5s")']);
  });

  test('an invalid CSS selector is refused with the parser message and a fix', () => {
    expect(errorsOf({ url: 'https://a.example.com/', expect: [{ css: '.price[', equals: '1' }] })).toEqual([
      'expect[0].css: ".price[" is not a valid CSS selector (Expected name, found); fix the selector, e.g. ' +
        '".price" or "span[itemprop=price]"',
    ]);
    expect(errorsOf({ url: 'https://a.example.com/', expect: [{ css: 'div:hovering', count: 1 }] })[0]).toMatch(
      /^expect\[0\]\.css: "div:hovering" is not a valid CSS selector \(Unknown pseudo-class :hovering\)/,
    );
  });

  test('malformed proxy URLs are refused and their passwords never echoed', () => {
    const base = { url: 'https://a.example.com/', expect: [{ status: 200 }] };
    expect(errorsOf({ ...base, proxy: 'localhost:8080' })).toEqual([
      'proxy: "localhost:8080" is not a proxy URL; use http://host:port or http://user:password@host:port ' +
        '(https:// for a TLS proxy)',
    ]);
    expect(errorsOf({ ...base, proxy: 'gw.proxy.example:8000' })[0]).toMatch(/^proxy: .* use http:\/\/host:port/);
    expect(errorsOf({ ...base, proxy: 'http://user:hunter2@gw.proxy.example' })).toEqual([
      'proxy: "http://user:***@gw.proxy.example" has no port; use http://host:port or ' +
        'http://user:password@host:port (https:// for a TLS proxy)',
    ]);
    expect(errorsOf({ ...base, proxy: 'socks5://gw.proxy.example:1080' })[0]).toMatch(/^proxy: .*has scheme "socks5"/);
    expect(errorsOf({ ...base, proxy: 'http://gw.proxy.example:8000/path' })[0]).toMatch(
      /^proxy: .*has a path or query/,
    );
    expect(errorsOf({ ...base, proxy: 'not a url' })[0]).toMatch(/^proxy: "not a url" is not a proxy URL/);
    expect(parseCanaryDefinition({ ...base, proxy: 'https://u:p@gw.proxy.example:443' })).toMatchObject({
      ok: true,
      definition: { proxy: 'https://u:p@gw.proxy.example:443' },
    });
  });

  test('route labels must be known to TARGET_HEALTH_ROUTES (when the caller checks them)', () => {
    const base = { url: 'https://a.example.com/', expect: [{ status: 200 }] };
    expect(errorsOf({ ...base, route: 'dc-us' })).toEqual([
      'route: unknown route label "dc-us"; labels in TARGET_HEALTH_ROUTES: residential-de',
    ]);
    expect(parseCanaryDefinition({ ...base, route: 'dc-us' }, { routes: new Map() })).toEqual({
      ok: false,
      errors: [
        'route: unknown route label "dc-us"; TARGET_HEALTH_ROUTES defines no labels; set it to a JSON object ' +
          'like {"residential-de": "http://host:port"} or use proxy',
      ],
    });
    // Reading stored rows back does not depend on this process's environment.
    expect(readStoredDefinition({ ...base, route: 'dc-us' }).ok).toBe(true);
    expect(errorsOf({ ...base, route: 'residential-de', proxy: 'http://p.example:1' })).toEqual([
      'route: give either proxy (a URL) or route (a label), not both',
    ]);
  });

  test('each bad expectation says which entry, which field and how to fix it', () => {
    const errors = errorsOf({
      url: 'https://a.example.com/',
      expect: [
        { css: '.price' },
        { css: '.price', equals: '1', matches: 'x' },
        { json: 'items/0', equals: 1 },
        { css: '.price', matches: '(' },
        { css: 'li', between: [5, 1] },
        { css: 'li', attr: 'href', count: 2 },
        { selector: '.price', equals: '1' },
        { css: '.a', json: '/a', equals: 1 },
        { status: 99 },
        { css: '.price', equls: '1' },
        'status 200',
      ],
    });
    expect(errors).toEqual([
      'expect[0]: say what to check with exactly one of equals, matches, between, count, atLeast (e.g. {"css": ' +
        '".price", "equals": "$139.95"})',
      'expect[1]: has equals and matches; use exactly one of them per entry (add another entry for another check)',
      'expect[2].json: "items/0" is not a JSON pointer: it must be "" (the whole document) or start with "/"; ' +
        'e.g. "/items/0/price"',
      'expect[3].matches: "(" is not a valid regular expression here (missing closing ): `(`); canary patterns ' +
        'run on RE2 in linear time: no lookahead (?=…), lookbehind (?<=…) or backreferences \\1; fix the pattern',
      'expect[4].between: min 5 is above max 1; write [min, max]',
      'expect[5].attr: counts elements, so an attribute makes no sense with count; remove attr',
      'expect[6]: must have one of status, css, json, absent (e.g. {"css": ".price", "equals": "$139.95"}); ' +
        'got fields selector, equals',
      'expect[7]: has both css and json; write one check per entry',
      'expect[8].status: must be an HTTP status code (an integer 100-999) (got 99)',
      'expect[9].equls: unknown field; did you mean "equals"?',
      'expect[10]: must be an object like {"css": ".price", "equals": "$139.95"}',
    ]);
  });

  test('top-level problems: missing url, empty expect, unknown fields, bad URL', () => {
    expect(errorsOf({ expect: [{ status: 200 }] })).toEqual([
      'url: is required: the http:// or https:// URL of a page whose answer you know',
    ]);
    expect(errorsOf({ url: 'https://a.example.com/', expect: [] })).toEqual([
      'expect: needs at least one check, e.g. [{"css": ".price", "equals": "$139.95"}]',
    ]);
    expect(errorsOf({ url: 'https://a.example.com/', expect: [{ status: 200 }], intervall: '1m' })).toEqual([
      'intervall: unknown field; did you mean "interval"?',
    ]);
    expect(errorsOf({ url: 'ftp://a.example.com/', expect: [{ status: 200 }] })).toEqual([
      'url: "ftp://a.example.com/" must start with http:// or https://',
    ]);
    expect(errorsOf({ url: 'https://a.example.com/', expect: [{ status: 200 }, { status: 203 }] })).toEqual([
      'expect: has more than one status check; list the codes in one: {"status": [200, 203]}',
    ]);
    expect(errorsOf({ name: 'Price Check', url: 'https://a.example.com/', expect: [{ status: 200 }] })[0]).toMatch(
      /^name: must be a name of 1-64 lower-case letters/,
    );
  });
});

describe('patterns run on the linear-time engine', () => {
  const withPattern = (matches: string) => ({ url: 'https://a.example.com/', expect: [{ css: '.price', matches }] });

  test('JavaScript-style patterns are accepted, a catastrophic one included (it cannot backtrack here)', () => {
    for (const pattern of [
      '^\\$\\d+\\.\\d{2}$',
      '^Trailrunner',
      '\\u00e9t\\u00e9',
      '(?<price>\\d+)',
      '^(\\d+)+$',
      '(a|aa)+$',
    ]) {
      expect(parseCanaryDefinition(withPattern(pattern))).toMatchObject({
        ok: true,
        definition: { expect: [{ assert: { op: 'matches', pattern } }] },
      });
    }
  });

  test('what RE2 cannot run in linear time is refused at definition time, naming the field', () => {
    expect(errorsOf(withPattern('^(?=.*\\d)\\w+$'))).toEqual([
      'expect[0].matches: "^(?=.*\\\\d)\\\\w+$" is not a valid regular expression here (invalid or unsupported ' +
        'Perl syntax: `(?=`); canary patterns run on RE2 in linear time: no lookahead (?=…), lookbehind (?<=…) ' +
        'or backreferences \\1; fix the pattern',
    ]);
    expect(errorsOf(withPattern('(\\d)\\1'))[0]).toMatch(
      /^expect\[0\]\.matches: .* \(invalid escape sequence: `\\1`\); canary patterns run on RE2/,
    );
    expect(errorsOf(withPattern('a{2000}'))[0]).toMatch(
      /^expect\[0\]\.matches: .* \(invalid repeat count: `\{2000\}`\)/,
    );
  });

  test('a stored row is read back even when its pattern predates the engine (the runner refuses it instead)', () => {
    expect(readStoredDefinition(withPattern('(?=x)'))).toMatchObject({
      ok: true,
      definition: { expect: [{ assert: { pattern: '(?=x)' } }] },
    });
  });
});

describe('what a canary may reach is checked when it is defined', () => {
  const loopback = { hosts: [], ranges: [] };
  test("the URL must be on the canary's site (or a subdomain)", () => {
    const reach = { hosts: [], ranges: [] };
    expect(
      parseCanaryDefinition(
        { url: 'https://www.shop.example.com/p/1', expect: [{ status: 200 }] },
        { reach, site: 'shop.example.com' },
      ).ok,
    ).toBe(true);
    expect(
      errorsOf({ url: 'https://intranet.example.net/', expect: [{ status: 200 }] }, true, {
        reach,
        site: 'shop.example.com',
      }),
    ).toEqual([
      'url: "https://intranet.example.net/" is not on shop.example.com; a canary may only fetch its own site ' +
        '(shop.example.com or its subdomains) — an operator can allow other hosts with ' +
        'TARGET_HEALTH_CANARY_ALLOWED_TARGETS="intranet.example.net"',
    ]);
    // A look-alike is not a subdomain.
    expect(
      errorsOf({ url: 'https://evilshop.example.com/', expect: [{ status: 200 }] }, true, {
        reach,
        site: 'shop.example.com',
      })[0],
    ).toMatch(/^url: .* is not on shop\.example\.com/);
  });

  test('internal addresses are refused; the operator setting allows exactly what it lists', () => {
    const url = 'http://127.0.0.1:8233/api/v1/namespaces';
    expect(errorsOf({ url, expect: [{ status: 200 }] }, true, { reach: loopback, site: 'shop.example.com' })).toEqual([
      `url: "${url}" is an IP address, not a page of shop.example.com; a canary may only fetch its own site ` +
        `(shop.example.com or its subdomains) — an operator can allow this address with ` +
        `TARGET_HEALTH_CANARY_ALLOWED_TARGETS="127.0.0.1"`,
    ]);
    const allowed = parseReachPolicy('127.0.0.1');
    if (!allowed.ok) throw new Error(allowed.problem);
    expect(
      parseCanaryDefinition({ url, expect: [{ status: 200 }] }, { reach: allowed.policy, site: 'shop.example.com' }).ok,
    ).toBe(true);
    expect(
      errorsOf({ url: 'http://127.0.0.2/', expect: [{ status: 200 }] }, true, {
        reach: allowed.policy,
        site: 'shop.example.com',
      })[0],
    ).toMatch(/^url: "http:\/\/127\.0\.0\.2\/" is an IP address/);
  });

  test('a config file checks each entry against its own site', () => {
    const result = parseCanaryFile(
      {
        canaries: [
          { site: 'shop.example.com', url: 'https://shop.example.com/p/1', expect: [{ status: 200 }] },
          { site: 'news.example.org', url: 'https://shop.example.com/p/1', expect: [{ status: 200 }] },
        ],
      },
      { reach: { hosts: [], ranges: [] } },
    );
    expect(result).toEqual({
      ok: false,
      errors: [
        expect.stringMatching(
          /^canaries\[1\]\.url: "https:\/\/shop\.example\.com\/p\/1" is not on news\.example\.org;/,
        ),
      ],
    });
  });
});

describe('every string of a definition must be storable', () => {
  test('NUL and half an emoji are refused by field, before anything is written', () => {
    expect(
      errorsOf({
        url: 'https://a.example.com/',
        expect: [{ css: '.price', equals: 'x\u0000' }, { absent: 'sold \ud83d out' }],
      }),
    ).toEqual([
      'expect[0].equals: the text holds a NUL character or half of a surrogate pair, which cannot be stored; ' +
        'remove it or write the text again',
      'expect[1].absent: the text holds a NUL character or half of a surrogate pair, which cannot be stored; ' +
        'remove it or write the text again',
    ]);
    expect(errorsOf({ url: 'https://a.example.com/', expect: [{ json: '/a', equals: { 'k\u0000': 1 } }] })).toEqual([
      'expect[0].equals: the field name "k\\u0000" holds a NUL character or half of a surrogate pair, which ' +
        'cannot be stored; remove it or write the text again',
    ]);
    // A whole emoji is fine.
    expect(
      parseCanaryDefinition({ url: 'https://a.example.com/', expect: [{ css: '.price', equals: 'deal 😀' }] }).ok,
    ).toBe(true);
  });

  test('in a config file the entry is named', () => {
    const result = parseCanaryFile({
      canaries: [{ site: 'a.example.com', url: 'https://a.example.com/\u0000', expect: [{ status: 200 }] }],
    });
    expect(result).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^canaries\[0\]\.url: the text holds a NUL character/)],
    });
  });
});

describe('canary config files', () => {
  test('many sites in one file; sites are normalised', () => {
    const result = parseCanaryFile(
      {
        canaries: [
          {
            site: 'https://Shop.Example.com/',
            name: 'price',
            url: 'https://shop.example.com/p/1',
            expect: [{ css: '.price', equals: '1' }],
          },
          {
            site: 'news.example.org',
            url: 'https://news.example.org/',
            route: 'residential-de',
            expect: [{ css: 'article', atLeast: 10 }],
          },
        ],
      },
      { routes },
    );
    expect(result).toMatchObject({
      ok: true,
      entries: [
        { site: 'shop.example.com', definition: { name: 'price' } },
        { site: 'news.example.org', definition: { name: 'home' } },
      ],
    });
  });

  test('every problem of every entry is reported with its position', () => {
    const result = parseCanaryFile(
      {
        canaries: [
          {
            site: 'shop.example.com',
            name: 'price',
            url: 'https://shop.example.com/p/1',
            expect: [{ css: '.price[', equals: '1' }],
          },
          { site: 'not a site', url: 'https://x.example.com/', expect: [{ status: 200 }] },
          {
            site: 'shop.example.com',
            name: 'price',
            url: 'https://shop.example.com/p/2',
            interval: '-1m',
            expect: [{ status: 200 }],
          },
          { site: 'shop.example.com', name: 'ok', url: 'https://shop.example.com/p/3', expect: [{ status: 200 }] },
          { site: 'shop.example.com', name: 'ok', url: 'https://shop.example.com/p/4', expect: [{ status: 200 }] },
          { url: 'https://shop.example.com/p/5', expect: [{ status: 200 }] },
        ],
      },
      { routes },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      expect.stringMatching(/^canaries\[0\]\.expect\[0\]\.css: "\.price\[" is not a valid CSS selector/),
      expect.stringMatching(/^canaries\[1\]\.site: must be a host name like shop\.example\.com \(got "not a site"\)/),
      'canaries[2].interval: must be a positive duration like "15m" (got "-1m")',
      'canaries[4].name: "ok" is already used by canaries[3] for shop.example.com; give each canary of a site ' +
        'its own name',
      'canaries[5].site: is required: a site like "shop.example.com"',
    ]);
  });

  test('the file must be {"canaries": [...]}', () => {
    expect(parseCanaryFile([{ site: 'a.example.com' }])).toEqual({
      ok: false,
      errors: [
        'file: must be an object like {"canaries": [{"site": "shop.example.com", "url": "https://…", "expect": ' +
          '[...]}]} (got an array)',
      ],
    });
    expect(parseCanaryFile({ canary: [] })).toEqual({
      ok: false,
      errors: [
        'canaries: is required: a list of canaries, each with a "site"',
        'canary: unknown field; known fields: canaries',
      ],
    });
  });
});

describe('TARGET_HEALTH_ROUTES', () => {
  test('a JSON object of label → proxy URL', () => {
    const result = parseRouteTable(
      '{"residential-de": "http://u:p@gw.example:8000", "dc-us": "https://dc.example:443"}',
    );
    expect(result.ok && [...result.table]).toEqual([
      ['residential-de', 'http://u:p@gw.example:8000'],
      ['dc-us', 'https://dc.example:443'],
    ]);
    expect(parseRouteTable(undefined)).toMatchObject({ ok: true });
  });

  test('problems name the label and hide passwords', () => {
    expect(parseRouteTable('{"a": "http://u:secret@gw.example"}')).toEqual({
      ok: false,
      problem:
        'label "a": "http://u:***@gw.example" has no port; use http://host:port or ' +
        'http://user:password@host:port (https:// for a TLS proxy)',
    });
    expect(parseRouteTable('[1]')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^must be a JSON object of route label → proxy URL/),
    });
    expect(parseRouteTable('{oops')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('it is not valid JSON'),
    });
    expect(parseRouteTable('{"bad label": "http://gw.example:1"}')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^label "bad label" must be 1-64/),
    });
    expect(parseRouteTable('{"a": 8000}')).toMatchObject({
      ok: false,
      problem: 'label "a": the proxy URL must be a string like "http://host:port"',
    });
  });
});
