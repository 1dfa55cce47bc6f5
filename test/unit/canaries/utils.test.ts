import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definitionFromFlags, usedDefinitionFlags } from '../../../client/commands/canary-flags';
import { parseCanaryDefinition } from '../../../core/canaries/definition';
import { formatDurationMs, parseDurationMs } from '../../../core/canaries/duration';
import { networkErrorOf } from '../../../server/canary-runner/fetch';
import { selectorProblem } from '../../../server/canary-runner/html';
import { pointerProblem, resolvePointer } from '../../../core/canaries/json-pointer';
import { parseDisplayedNumber } from '../../../core/canaries/numbers';
import { checkProxyUrl, proxyEndpoint, redactProxyUrl } from '../../../core/canaries/proxy-url';
import { DEFAULT_REACH } from '../../../core/canaries/reach';
import { resolveRoute } from '../../../core/canaries/routes';
import { DEFAULT_CANARY_USER_AGENT, loadCanarySettings } from '../../../server/canary-runner/settings';
import { UserError } from '../../../core/common/user-error';
import { cutText, isWellFormed, wellFormed } from '@target-health/crawler/events/well-formed';
import { DEFAULT_CANARY_POLICY } from '../../../core/canaries/band-floor';
import { DEFAULT_MAX_AGE_INTERVALS } from '../../../core/canaries/latest';
import { DEFAULT_BASELINE_TRUST } from '../../../server/db/canaries';

describe('displayed numbers', () => {
  test.each([
    ['$139.95', 139.95],
    ['1,299.00 USD', 1299],
    ['1.299,00 €', 1299],
    ['€ 12,5', 12.5],
    ['1,299', 1299],
    ['12.500', 12500],
    ['0.125', 0.125],
    ['1,299,000', 1299000],
    ['-3.5 %', -3.5],
    ['CHF 1\u2019299.50'.replace('\u2019', "'"), 1299.5],
    ['4.6 out of 5', 4.6],
    ['no price', undefined],
  ])('%s → %s', (text, value) => {
    expect(parseDisplayedNumber(text)).toBe(value);
  });

  test('trailing separators are dropped in one pass (a page text of "1.,.,.,…" once took quadratic time)', () => {
    expect(parseDisplayedNumber('$12.,')).toBe(12);
    // 2 MB of separators after a digit: the regex `[.,]+$` needed hours for this; the loop reads it once.
    expect(parseDisplayedNumber(`1${'.,'.repeat(1_000_000)}x`)).toBe(1);
    expect(parseDisplayedNumber(`7${'.,'.repeat(1_000_000)}`)).toBe(7);
  });
});

describe('well-formed text (packages/crawler/src/events/well-formed.ts)', () => {
  test('cuts fall on code-point boundaries, with the ellipsis inside the limit', () => {
    expect(cutText('abc😀def', 5)).toBe('abc…');
    expect(cutText('abc😀def', 6)).toBe('abc😀…');
    expect(cutText('abc😀def', 4, '')).toBe('abc');
    expect(cutText('short', 10)).toBe('short');
  });
  test('NUL and lone surrogates become U+FFFD; whole pairs stay', () => {
    expect(wellFormed('a\u0000b\ud83dc\ude00d😀')).toBe('a\uFFFDb\uFFFDc\uFFFDd😀');
    expect(isWellFormed('😀')).toBe(true);
    expect(isWellFormed('\ud83d')).toBe(false);
    expect(isWellFormed('\u0000')).toBe(false);
  });
});

describe('JSON pointers (RFC 6901)', () => {
  const doc = { a: [{ 'b/c': 1, 'm~n': 2 }], '': 3 };
  test('resolve with escapes, arrays and the whole document', () => {
    expect(resolvePointer(doc, '/a/0/b~1c')).toEqual({ found: true, value: 1 });
    expect(resolvePointer(doc, '/a/0/m~0n')).toEqual({ found: true, value: 2 });
    expect(resolvePointer(doc, '/')).toEqual({ found: true, value: 3 });
    expect(resolvePointer(doc, '')).toEqual({ found: true, value: doc });
    expect(resolvePointer(doc, '/a/01')).toEqual({ found: false, missing: '/a/01' });
    expect(resolvePointer(doc, '/a/1/x')).toEqual({ found: false, missing: '/a/1' });
    expect(resolvePointer(doc, '/toString')).toEqual({ found: false, missing: '/toString' });
  });
  test('malformed pointers', () => {
    expect(pointerProblem('a/b')).toMatch(/start with "\/"/);
    expect(pointerProblem('/a~2')).toMatch(/"~" not followed by 0 or 1/);
    expect(pointerProblem('/a~1b')).toBeUndefined();
  });
});

describe('durations', () => {
  test('parse and format', () => {
    expect(parseDurationMs('15m')).toBe(900_000);
    expect(parseDurationMs(' 1.5h ')).toBe(5_400_000);
    expect(parseDurationMs('-5m')).toBe(-300_000);
    expect(parseDurationMs('5 minutes')).toBeUndefined();
    expect(formatDurationMs(900_000)).toBe('15m');
    expect(formatDurationMs(90_000)).toBe('90s');
    expect(formatDurationMs(86_400_000)).toBe('1d');
    expect(formatDurationMs(1_500)).toBe('1500ms');
  });
});

describe('proxy URLs and routes', () => {
  test('validation accepts host:port URLs with credentials and explicit default ports', () => {
    expect(checkProxyUrl('http://gw.example:80')).toEqual({ ok: true, url: 'http://gw.example:80' });
    expect(checkProxyUrl('http://user-country-de:p%40ss@gw.example:8000')).toMatchObject({ ok: true });
    expect(checkProxyUrl('http://[::1]:3128')).toMatchObject({ ok: true });
    expect(checkProxyUrl('http://gw.example')).toMatchObject({ ok: false });
  });
  test('passwords never leave in what people see', () => {
    expect(redactProxyUrl('http://user:secret@gw.example:8000')).toBe('http://user:***@gw.example:8000');
    expect(redactProxyUrl('nonsense //user:secret@host')).toBe('nonsense //user:***@host');
    expect(proxyEndpoint('http://user:secret@gw.example:8000')).toBe('gw.example:8000');
  });
  test('resolution: label, own proxy, direct; an unknown label is a configuration problem', () => {
    const table = new Map([['res-de', 'http://u:p@gw.example:8000']]);
    expect(resolveRoute({ route: 'res-de' }, table)).toEqual({
      ok: true,
      proxyUrl: 'http://u:p@gw.example:8000',
      shown: 'route res-de',
      pool: 'res-de',
    });
    expect(resolveRoute({ proxy: 'http://u:p@10.0.0.5:3128' }, table)).toEqual({
      ok: true,
      proxyUrl: 'http://u:p@10.0.0.5:3128',
      shown: 'proxy 10.0.0.5:3128',
      pool: '10.0.0.5:3128',
    });
    expect(resolveRoute({}, table)).toEqual({ ok: true, proxyUrl: undefined, shown: 'direct', pool: undefined });
    expect(resolveRoute({ route: 'dc-us' }, table)).toMatchObject({
      ok: false,
      shown: 'route dc-us',
      problem: expect.stringContaining('not in TARGET_HEALTH_ROUTES'),
    });
  });
});

describe('network errors in the event vocabulary', () => {
  const err = (code: string, message = code) => Object.assign(new Error(message), { code });
  test.each([
    [err('UND_ERR_CONNECT_TIMEOUT'), false, 'timeout'],
    [err('UND_ERR_HEADERS_TIMEOUT'), true, 'timeout'],
    [err('ECONNRESET'), false, 'connection_reset'],
    [err('UND_ERR_SOCKET', 'other side closed'), true, 'connection_reset'],
    [err('ENOTFOUND'), false, 'dns'],
    [err('ENOTFOUND'), true, 'proxy'],
    [err('ECONNREFUSED'), true, 'proxy'],
    [err('ECONNREFUSED'), false, 'other'],
    [err('UND_ERR_ABORTED', 'Proxy response (407) !== 200 when HTTP Tunneling'), true, 'proxy'],
    [err('UND_ERR_INVALID_ARG', 'Proxy Authentication Required (407)'), true, 'proxy'],
    [err('DEPTH_ZERO_SELF_SIGNED_CERT'), false, 'tls'],
    [Object.assign(new Error('fetch failed'), { cause: err('ERR_TLS_CERT_ALTNAME_INVALID') }), false, 'tls'],
    [new Error('weird'), false, 'other'],
  ])('%s (via proxy: %s) → %s', (error, viaProxy, expected) => {
    expect(networkErrorOf(error, viaProxy)).toBe(expected);
  });
});

describe('canary settings from the environment', () => {
  test('defaults', () => {
    expect(loadCanarySettings({})).toEqual({
      userAgent: DEFAULT_CANARY_USER_AGENT,
      timeoutMs: 20_000,
      connectTimeoutMs: 5_000,
      maxBodyBytes: 2 * 1024 * 1024,
      concurrency: 4,
      routes: new Map(),
      reach: DEFAULT_REACH,
    });
    expect(DEFAULT_CANARY_USER_AGENT).toMatch(/^target-health-canary\//);
  });
  test('each bad value is one line naming the variable', () => {
    const fail = (env: Record<string, string>) => {
      try {
        loadCanarySettings(env);
      } catch (e) {
        expect(e).toBeInstanceOf(UserError);
        return (e as Error).message;
      }
      throw new Error('expected a UserError');
    };
    expect(fail({ TARGET_HEALTH_CANARY_TIMEOUT_MS: 'soon' })).toBe(
      'TARGET_HEALTH_CANARY_TIMEOUT_MS: must be a whole number like 20000 (got "soon")',
    );
    expect(fail({ TARGET_HEALTH_CANARY_MAX_BYTES: '10' })).toBe(
      'TARGET_HEALTH_CANARY_MAX_BYTES: must be between 1024 and 104857600 (got "10")',
    );
    expect(fail({ TARGET_HEALTH_ROUTES: '{"a": "gw.example:1"}' })).toMatch(/^TARGET_HEALTH_ROUTES: label "a": /);
    expect(fail({ TARGET_HEALTH_CANARY_ALLOWED_TARGETS: '127.0.0.1, http://intranet/' })).toBe(
      'TARGET_HEALTH_CANARY_ALLOWED_TARGETS: "http://intranet/" is neither a host name, an IP address nor a ' +
        'CIDR range; give a comma-separated list like "127.0.0.1, 10.20.0.0/16, intranet.example.net"',
    );
    expect(
      loadCanarySettings({
        TARGET_HEALTH_CANARY_USER_AGENT: 'Mozilla/5.0 (crawler)',
        TARGET_HEALTH_CANARY_TIMEOUT_MS: '1500',
      }),
    ).toMatchObject({ userAgent: 'Mozilla/5.0 (crawler)', timeoutMs: 1500 });
  });
});

describe('canary add flags', () => {
  test('flags become the same JSON a file would hold', () => {
    const built = definitionFromFlags({
      url: 'https://shop.example.com/p/1',
      route: 'res-de',
      interval: '10m',
      expectStatus: '200',
      expectText: '.price',
      equals: '$139.95',
      expectCount: 'li',
      atLeast: '3',
      expectAbsent: ['sold out', 'captcha'],
    });
    expect(built).toMatchObject({
      ok: true,
      json: {
        url: 'https://shop.example.com/p/1',
        route: 'res-de',
        interval: '10m',
        expect: [
          { status: 200 },
          { css: '.price', equals: '$139.95' },
          { css: 'li', atLeast: 3 },
          { absent: 'sold out' },
          { absent: 'captcha' },
        ],
      },
    });
    const json = definitionFromFlags({
      url: 'https://a.example.com/api',
      expectJson: '/items/0/price',
      equals: '19.99',
    });
    expect(json.ok && json.json.expect).toEqual([{ json: '/items/0/price', equals: 19.99 }]);
    expect(usedDefinitionFlags({ url: 'x', expectAbsent: [] })).toEqual(['--url']);
  });

  test('errors name the flag the person typed', () => {
    const built = definitionFromFlags({
      url: 'https://a.example.com/',
      proxy: 'localhost:8080',
      interval: '-5m',
      expectText: '.price[',
      equals: '1',
    });
    if (!built.ok) throw new Error(built.errors.join('\n'));
    const parsed = parseCanaryDefinition(built.json, { selectorProblem });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors.map(built.flagOf)).toEqual([
      expect.stringMatching(/^--proxy: "localhost:8080" is not a proxy URL; use http:\/\/host:port/),
      '--interval: must be a positive duration like "15m" (got "-5m")',
      expect.stringMatching(/^--expect-text: "\.price\[" is not a valid CSS selector/),
    ]);
  });

  test('flag combinations that cannot work are refused before parsing', () => {
    expect(definitionFromFlags({ url: 'u', equals: '1' })).toEqual({
      ok: false,
      errors: ['--equals: needs --expect-text <css selector> or --expect-json <pointer> to say what it checks'],
    });
    expect(definitionFromFlags({ url: 'u', expectText: '.a' })).toEqual({
      ok: false,
      errors: ['--expect-text: say what to check with --equals, --matches or --between'],
    });
    expect(definitionFromFlags({ url: 'u', expectCount: 'li' })).toEqual({
      ok: false,
      errors: ['--expect-count: give exactly one of --count <n> or --at-least <n>'],
    });
    expect(definitionFromFlags({ url: 'u', expectText: '.a', between: '1-2' })).toEqual({
      ok: false,
      errors: ['--between: "1-2" must be a range like 100..200'],
    });
    expect(definitionFromFlags({ url: 'u', expectStatus: 'ok' })).toEqual({
      ok: false,
      errors: ['--expect-status: "ok" must be a status code like 200, or codes like 200,203'],
    });
    expect(definitionFromFlags({ url: 'u' })).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^--expect-text: a canary needs at least one check/)],
    });
  });
});

describe('core/canaries/ holds pure rules only', () => {
  // The control loop imports some of these from workflow code (Temporal's sandbox forbids Node builtins
  // and I/O), and the folder must not depend on server/db/, activities/, client/ or server/canary-runner/ (which
  // depend on it); the crawler package's `events` modules are pure too. The lint's deterministic block
  // says the same for Node builtins and I/O libraries.
  const folder = join(__dirname, '..', '..', '..', 'core', 'canaries');
  const files = readdirSync(folder).filter((f) => f.endsWith('.ts'));
  test('the folder is not empty', () => expect(files.length).toBeGreaterThan(10));
  test.each(files)('core/canaries/%s imports only pure modules', (file) => {
    const source = readFileSync(join(folder, file), 'utf8');
    const imports = [...source.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
    const pureImportPatterns = [
      'zod',
      're2js',
      'ipaddr\\.js',
      '@target-health/crawler/events(/[a-z-]+)?',
      '\\./[a-z-]+',
      '\\.\\./(scoring|common|signals)/[a-z-/]+',
    ];
    for (const spec of imports) expect(spec).toMatch(new RegExp(`^(${pureImportPatterns.join('|')})$`));
    expect(source).not.toMatch(/\brequire\(/);
    expect(source).not.toMatch(/\bprocess\./);
  });
});

describe('docs/canaries.md stays in step with the code', () => {
  const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'canaries.md'), 'utf8');
  test('defaults named in the documentation are the defaults in the code', () => {
    const settings = loadCanarySettings({});
    expect(doc).toContain(`| \`TARGET_HEALTH_CANARY_USER_AGENT\` | \`${DEFAULT_CANARY_USER_AGENT}\` |`);
    expect(doc).toContain(`| \`TARGET_HEALTH_CANARY_TIMEOUT_MS\` | \`${settings.timeoutMs}\` |`);
    expect(doc).toContain(`| \`TARGET_HEALTH_CANARY_CONNECT_TIMEOUT_MS\` | \`${settings.connectTimeoutMs}\` |`);
    expect(doc).toContain(`| \`TARGET_HEALTH_CANARY_MAX_BYTES\` | \`${settings.maxBodyBytes}\``);
    expect(doc).toContain(`| \`TARGET_HEALTH_CANARY_CONCURRENCY\` | \`${settings.concurrency}\` |`);
    expect(settings.reach).toEqual(DEFAULT_REACH);
    expect(doc).toContain('| `TARGET_HEALTH_CANARY_ALLOWED_TARGETS` | empty |');
    expect(doc).toContain(
      `**at least ${DEFAULT_BASELINE_TRUST.minMismatchedRuns} mismatched canary run, or at least ` +
        `${DEFAULT_BASELINE_TRUST.minFailedRuns} failed runs**`,
    );
    expect(doc).toContain(
      `default \`{ floorBand: '${DEFAULT_CANARY_POLICY.floorBand}', headReasons: ` +
        `${DEFAULT_CANARY_POLICY.headReasons} }\``,
    );
    expect(doc).toContain(`older than ${DEFAULT_MAX_AGE_INTERVALS} × its interval`);
  });
});
