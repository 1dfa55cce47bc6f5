/**
 * The verdict on one fetch, on the real fixture pages the classifier is tested with: the production
 * classifier speaks first; only a normal page is checked against the known answer.
 */
import { checkContent as checkWith } from '../../../core/canaries/check';
import { parseCanaryDefinition } from '../../../core/canaries/definition';
import type { Expectation } from '../../../core/canaries/expectation';
import type { FetchOutcome } from '../../../core/canaries/fetch-outcome';
import type { Classifier } from '@target-health/crawler/events/classify';
import { judgeCanary as judgeWith } from '../../../core/canaries/judge';
import { parseHtml, selectorProblem } from '../../../server/canary-runner/html';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { compileClassifier } from '@target-health/crawler/events/classify';
import { fixturePage as page, productPage } from '../../kit/http-fixtures';

const PRODUCT = productPage();
const classify = compileClassifier();
// The rules take the HTML engine as a parameter; these tests use the real one (cheerio).
const judgeCanary = (fetched: FetchOutcome, expect: readonly Expectation[], classifier: Classifier) =>
  judgeWith(fetched, expect, classifier, parseHtml);
const checkContent = (expect: readonly Expectation[], page: { status: number; body: string }) =>
  checkWith(expect, page, parseHtml);

function expectations(expect: unknown[]): Expectation[] {
  const parsed = parseCanaryDefinition({ url: 'https://shop.example.com/p/1', expect }, { selectorProblem });
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return parsed.definition.expect;
}

function response(body: string, status = 200, headers: Record<string, string> = {}): FetchOutcome {
  return {
    kind: 'response',
    status,
    headers: { 'content-type': 'text/html', ...headers },
    body,
    bytes: Buffer.byteLength(body),
    truncated: false,
    latencyMs: 42,
    viaProxy: false,
  };
}

const PRICE = expectations([
  { css: '.price', equals: '$139.95' },
  { css: '.price', attr: 'content', between: [100, 200] },
  { absent: 'out of stock' },
]);

describe('judgeCanary', () => {
  test('the normal page with the known price passes', () => {
    const v = judgeCanary(response(PRODUCT), PRICE, classify);
    expect(v).toMatchObject({
      result: 'pass',
      reason: 'status 200; all 3 checks hold',
      classification: { outcome: 'ok' },
    });
    expect(v.evidence).toContain('.price text equals "$139.95": "$139.95"');
  });

  test('a changed price on a normal-looking page is a mismatch with expected vs actual', () => {
    const changed = PRODUCT.replace('$139.95', '$119.95');
    const v = judgeCanary(response(changed), PRICE, classify);
    expect(v.result).toBe('mismatch');
    expect(v.classification.outcome).toBe('ok');
    expect(v.reason).toBe('wrong value on a normal-looking page: .price text equals "$139.95", got "$119.95"');
    expect(v.evidence).toBe(
      '.price text equals "$139.95": expected "$139.95", got "$119.95" in <span class="price" itemprop="price" ' +
        'content="139.95">$119.95</span>',
    );
  });

  test('several failed checks are all in the evidence, the first in the reason', () => {
    const changed = PRODUCT.replace(/139\.95/g, '319.95').replace('In stock', 'Out of stock');
    const v = judgeCanary(response(changed), PRICE, classify);
    expect(v.result).toBe('mismatch');
    expect(v.reason).toMatch(/got "\$319\.95" \(and 2 more of 3 checks\)$/);
    expect(v.evidence).toContain(
      '[content] is a number in [100, 200]: expected a number in [100, 200], got "319.95" (319.95)',
    );
    expect(v.evidence).toContain('"out of stock" absent: expected absent, got present at character');
  });

  test('a block page served with 200 is blocked (soft block), never a mismatch', () => {
    const v = judgeCanary(response(page('cloudflare-blocked.html')), PRICE, classify);
    expect(v).toMatchObject({ result: 'blocked', classification: { outcome: 'soft_block', rule: 'block_marker' } });
    expect(v.reason).toMatch(/^status 200 carrying a Cloudflare block page/);
    expect(v.evidence).toMatch(/^soft_block on status 200, title "Attention Required! \| Cloudflare"; matched/);
  });

  test('a challenge is blocked (challenge), on 403 and on 200', () => {
    for (const status of [403, 200]) {
      const v = judgeCanary(response(page('cloudflare-just-a-moment.html'), status), PRICE, classify);
      expect(v).toMatchObject({ result: 'blocked', classification: { outcome: 'challenge' } });
      expect(v.reason).toMatch(new RegExp(`^Cloudflare challenge on status ${status}`));
    }
  });

  test('a bare 403 or 429 is blocked (hard block)', () => {
    expect(judgeCanary(response('nope', 403), PRICE, classify)).toMatchObject({
      result: 'blocked',
      reason: 'status 403 (forbidden: explicit refusal)',
    });
    expect(judgeCanary(response('slow down', 429), PRICE, classify)).toMatchObject({
      result: 'blocked',
      classification: { outcome: 'hard_block' },
    });
  });

  test('network errors: timeout is an error, a connection reset is a block', () => {
    const timeout: FetchOutcome = {
      kind: 'network-error',
      networkError: 'timeout',
      message: 'no complete answer within 2000 ms',
      latencyMs: 2001,
      viaProxy: true,
    };
    expect(judgeCanary(timeout, PRICE, classify)).toMatchObject({
      result: 'error',
      reason: 'network error: timeout (no complete answer within 2000 ms)',
      evidence: 'no complete answer within 2000 ms',
      classification: { outcome: 'error', rule: 'network_error' },
    });
    const reset: FetchOutcome = {
      kind: 'network-error',
      networkError: 'connection_reset',
      message: 'read ECONNRESET',
      latencyMs: 3,
      viaProxy: false,
    };
    expect(judgeCanary(reset, PRICE, classify)).toMatchObject({
      result: 'blocked',
      classification: { outcome: 'hard_block' },
    });
  });

  test('server errors and unexpected statuses are errors; a redirect names its target', () => {
    expect(judgeCanary(response('<title>Oops</title>down', 503), PRICE, classify)).toMatchObject({
      result: 'error',
      reason: 'status 503 (server error)',
      evidence: 'status 503, title "Oops": Oops down',
    });
    expect(
      judgeCanary(response('', 301, { location: 'https://shop.example.com/p/1-new' }), PRICE, classify),
    ).toMatchObject({
      result: 'error',
      reason:
        'status 301, expected 2xx (redirect to https://shop.example.com/p/1-new; point the canary at the final URL)',
    });
    const redirectToCaptcha = judgeCanary(response('', 302, { location: '/captcha?return=/p/1' }), PRICE, classify);
    expect(redirectToCaptcha).toMatchObject({
      result: 'blocked',
      classification: { outcome: 'challenge', evidence: { markerId: 'redirect-to-captcha' } },
    });
  });

  test('an explicitly expected error status is the known answer (e.g. a page known to be gone)', () => {
    const gone = expectations([{ status: 410 }, { css: 'h1', equals: 'Gone' }]);
    expect(judgeCanary(response('<h1>Gone</h1>', 410), gone, classify)).toMatchObject({ result: 'pass' });
    expect(judgeCanary(response('<h1>Here</h1>', 200), gone, classify)).toMatchObject({
      result: 'error',
      reason: 'status 200, expected 410',
    });
  });

  test("the site's own classifier settings apply (same classifier as production)", () => {
    const siteClassifier = compileClassifier({
      extraMarkers: [{ id: 'shop-verify', vendor: 'Example Shop', kind: 'challenge', bodyAny: ['/__verify'] }],
    });
    const page = PRODUCT.replace('</body>', '<script src="/__verify/check.js"></script></body>');
    expect(judgeCanary(response(page), PRICE, classify).result).toBe('pass');
    expect(judgeCanary(response(page), PRICE, siteClassifier)).toMatchObject({
      result: 'blocked',
      classification: { outcome: 'challenge', evidence: { markerId: 'shop-verify' } },
    });
  });

  test('a page cut by the body cap says so when a check fails', () => {
    const cut: FetchOutcome = {
      ...(response(PRODUCT.slice(0, 500)) as Extract<FetchOutcome, { kind: 'response' }>),
      truncated: true,
      bytes: PRODUCT.length,
    };
    expect(judgeCanary(cut, PRICE, classify).reason).toMatch(/\(page cut at 500 characters by the body cap\)$/);
  });
});

describe('content checks', () => {
  const ITEMS = Array.from({ length: 12 }, (_, i) => {
    const price = `€ 1.299,${String(i).padStart(2, '0')}`;
    return `<li class="item"><a href="/p/${i}">Item ${i}</a> <span class="p">${price}</span></li>`;
  });
  const LISTING = `<ul>${ITEMS.join('')}</ul>`;

  test('CSS counts, attributes, regexes and displayed numbers', () => {
    const results = checkContent(
      expectations([
        { css: 'li.item', count: 12 },
        { css: 'li.item', atLeast: 13 },
        { css: 'li.item a', attr: 'href', equals: '/p/0' },
        { css: 'li.item a', attr: 'title', equals: 'x' },
        { css: '.p', between: [1299, 1300] },
        { css: '.p', matches: '^€ \\d' },
        { css: '.missing', equals: 'x' },
      ]),
      { status: 200, body: LISTING },
    );
    expect(results.map((r) => [r.ok, r.actual])).toEqual([
      [true, '12 matches'],
      [false, '12 matches'],
      [true, '"/p/0"'],
      [false, 'the element has no title attribute'],
      [true, '"€ 1.299,00" (1299)'],
      [true, '"€ 1.299,00"'],
      [false, 'no element matches .missing'],
    ]);
  });

  test('JSON pointers: equality is JSON equality, counts need a list', () => {
    const body = JSON.stringify({
      items: [
        { price: 19.99, name: 'A' },
        { price: '4.50', name: 'B' },
      ],
      meta: { total: 2, 'a/b': true },
    });
    const results = checkContent(
      expectations([
        { json: '/items/0/price', equals: 19.99 },
        { json: '/items/0/price', equals: '19.99' },
        { json: '/items', count: 2 },
        { json: '/items', atLeast: 3 },
        { json: '/items/1/price', between: [4, 5] },
        { json: '/meta/a~1b', equals: true },
        { json: '/meta', equals: { 'a/b': true, total: 2 } },
        { json: '/items/5/price', equals: 1 },
        { json: '/meta/total', count: 1 },
        { json: '/items/1/name', matches: '^B$' },
      ]),
      { status: 200, body },
    );
    expect(results.map((r) => [r.ok, r.actual])).toEqual([
      [true, '19.99'],
      [false, '19.99'],
      [true, '2 items'],
      [false, '2 items'],
      [true, '"4.50" (4.5)'],
      [true, 'true'],
      [true, '{"total":2,"a/b":true}'],
      [false, 'nothing at /items/5'],
      [false, '2 (not a list)'],
      [true, '"B"'],
    ]);
  });

  test('a JSON check on an HTML page fails with a clear actual', () => {
    const [result] = checkContent(expectations([{ json: '/price', equals: 1 }]), { status: 200, body: PRODUCT });
    expect(result).toMatchObject({ ok: false, actual: expect.stringMatching(/^the body is not JSON \(/) });
  });

  test('absent markers are case-insensitive and show where they were found', () => {
    const [result] = checkContent(expectations([{ absent: 'IN STOCK' }]), { status: 200, body: PRODUCT });
    expect(result).toMatchObject({
      ok: false,
      expected: 'absent',
      excerpt: expect.stringContaining('In stock — ships within 24 hours'),
    });
  });
});

describe('a crawled page cannot stall or break its own check', () => {
  test('a catastrophic pattern runs in linear time: the outcome is computed, not waited out', () => {
    // `^(\d+)+$` backtracks exponentially in JavaScript's RegExp (29 digits and an "x": 1.6 s; each more
    // digit doubles it). On RE2 the answer for 1,999 digits comes back like any other.
    const page = (text: string) => ({ status: 200, body: `<span class="n">${text}</span>` });
    const check = expectations([{ css: '.n', matches: '^(\\d+)+$' }]);
    expect(checkContent(check, page(`${'1'.repeat(1_999)}x`))[0]).toMatchObject({ ok: false, expected: '/^(\\d+)+$/' });
    expect(checkContent(check, page('1'.repeat(1_999)))[0]).toMatchObject({ ok: true });
    const json = expectations([{ json: '/n', matches: '(a|aa)+$' }]);
    expect(checkContent(json, { status: 200, body: JSON.stringify({ n: `${'a'.repeat(1_999)}!` }) })[0]).toMatchObject({
      ok: false,
    });
  });

  test('a stored pattern the engine cannot run fails its check and says why (never runs on RegExp)', () => {
    const stored: Expectation[] = [
      { kind: 'css', selector: '.price', assert: { op: 'matches', pattern: '(?=\\$)\\$1' } },
    ];
    expect(checkContent(stored, { status: 200, body: PRODUCT })[0]).toMatchObject({
      ok: false,
      actual: 'the pattern cannot run (invalid or unsupported Perl syntax: `(?=`)',
    });
  });

  test('an emoji where the shown value is cut (character ~117) is dropped whole, never halved', () => {
    const price = `${'A'.repeat(116)}😀 now $119.95`;
    const v = judgeCanary(response(PRODUCT.replace('$139.95', price)), PRICE, classify);
    expect(v.result).toBe('mismatch');
    expect(v.checks[1]).toMatchObject({ check: '.price text equals "$139.95"', actual: `"${'A'.repeat(116)}…"` });
    for (const text of [v.reason, v.evidence, ...v.checks.flatMap((c) => [c.expected, c.actual, c.excerpt ?? ''])])
      expect(isWellFormed(text)).toBe(true);
    // Kept whole where it fits: the excerpt carries the element, emoji included.
    expect(v.checks[1]?.excerpt).toContain('😀');
  });

  test('NUL and lone surrogates of a page become U+FFFD in reason, evidence and excerpts', () => {
    const error = judgeCanary(
      response('<title>Oops\u0000</title><p>Internal\u0000error \ud83d</p>', 500),
      PRICE,
      classify,
    );
    expect(error).toMatchObject({
      result: 'error',
      evidence: 'status 500, title "Oops\\u0000": Oops\uFFFD Internal\uFFFDerror \uFFFD',
    });
    const absent = judgeCanary(response(PRODUCT.replace('In stock', 'Out of stock\u0000')), PRICE, classify);
    expect(absent.result).toBe('mismatch');
    for (const text of [absent.reason, absent.evidence, ...absent.checks.map((c) => c.excerpt ?? '')])
      expect(isWellFormed(text)).toBe(true);
  });

  test('error pages of unclosed tags are read in one pass (the old tag-stripping regex was quadratic)', () => {
    // 400 KB of "<": about 4 minutes with `<[^>]+>`; the evidence is the same text it would have given.
    expect(judgeCanary(response('<'.repeat(400_000), 503), PRICE, classify).evidence).toBe(
      `status 503: ${'<'.repeat(160)}`,
    );
    expect(judgeCanary(response('<script>'.repeat(50_000), 503), PRICE, classify).evidence).toBe('status 503');
  });
});
