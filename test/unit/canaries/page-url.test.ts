/**
 * A canary page URL's secrets (core/canaries/page-url.ts, docs/security.md): user info refused when defined,
 * secret query values masked wherever a URL or a run's text is shown, a page echoing its own URL
 * included.
 */
import fc from 'fast-check';
import { parseCanaryDefinition, parseCanaryFile, readStoredDefinition } from '../../../core/canaries/definition';
import type { FetchOutcome } from '../../../core/canaries/fetch-outcome';
import { judgeCanary } from '../../../core/canaries/judge';
import { pageTextCleaner, pageUrlSecrets, redactPageUrl } from '../../../core/canaries/page-url';
import { parseHtml, selectorProblem } from '../../../server/canary-runner/html';
import { type CanaryRun, withoutPageSecrets } from '../../../server/canary-runner/run-canary';
import { compileClassifier } from '@target-health/crawler/events/classify';
import { productPage } from '../../kit/http-fixtures';
import { runs } from '../../kit/sizes';
import { joinRegExp } from '../../kit/regexp';

const TOKEN = 'tk-7f3a9c1e5b2d';

describe('redactPageUrl', () => {
  test('a URL without secrets is shown exactly as written', () => {
    for (const url of [
      'https://shop.example.com/p/1',
      'HTTPS://Shop.Example.com:443/p/1?q=a b&page=2#top',
      'https://shop.example.com/s?key=',
    ]) {
      expect(redactPageUrl(url)).toBe(url);
    }
  });

  test('secret query values are masked, the other parameters kept', () => {
    expect(
      redactPageUrl(
        `https://shop.example.com/p/1?lang=en&token=${TOKEN}&page_token=abc123&api%5Fkey=k-99&sig=s1gn&key=shoes`,
      ),
    ).toBe('https://shop.example.com/p/1?lang=en&token=***&page_token=***&api%5Fkey=***&sig=***&key=***');
  });

  test('user info is masked whole (a user name alone can be a key)', () => {
    expect(redactPageUrl('https://api-key-123@shop.example.com/p/1')).toBe('https://***@shop.example.com/p/1');
    expect(redactPageUrl('https://user:p%40ss%3Aw%2Frd@shop.example.com/p/1?token=x1')).toBe(
      'https://***@shop.example.com/p/1?token=***',
    );
  });

  test('property: no random secret value survives, in a query or as user info', () => {
    const core = fc.stringMatching(/^[0-9a-f]{12}$/);
    const wrap = fc.string({ maxLength: 8, unit: fc.constantFrom(...'aZ9-._~!$&\'()*+,;=:@/?%" #[]\\'.split('')) });
    fc.assert(
      fc.property(
        core,
        wrap,
        wrap,
        fc.constantFrom('token', 'password', 'api_key', 'client_secret', 'sig', 'X-Amz-Signature'),
        (c, before, after, name) => {
          const value = encodeURIComponent(`${before}${c}${after}`);
          expect(redactPageUrl(`https://shop.example.com/p?a=1&${name}=${value}&b=2`)).not.toContain(c);
          expect(redactPageUrl(`https://u${c}:${value}@shop.example.com/p`)).not.toContain(c);
          // A page quoting the URL, %-decoded, or the bare value: the cleaner masks each.
          const clean = pageTextCleaner(`https://shop.example.com/p?${name}=${value}`);
          expect(clean(`canonical "https://shop.example.com/p?${name}=${value}"`)).not.toContain(c);
          expect(clean(`your ${name}: ${before}${c}${after}.`)).not.toContain(c);
        },
      ),
      { numRuns: runs(10_000) },
    );
  });
});

describe('page credentials are refused when a canary is defined', () => {
  const base = { expect: [{ status: 200 }] };

  test('user:password@ and a bare user name: one line naming the field and the fix, without the secret', () => {
    for (const url of [
      'https://crawler:hunter2-secret@shop.example.com/p/1',
      'https://hunter2-secret@shop.example.com/p/1',
      'https://:hunter2-secret@shop.example.com/p/1',
    ]) {
      const result = parseCanaryDefinition({ ...base, url }, { selectorProblem });
      expect(result).toEqual({
        ok: false,
        errors: [
          'url: "https://***@shop.example.com/p/1" holds credentials (user:password@); page credentials are ' +
            'not supported: remove them and point the canary at a page anyone can load (give a route or proxy ' +
            'for how it travels)',
        ],
      });
    }
    const file = parseCanaryFile(
      { canaries: [{ site: 'shop.example.com', url: 'https://u:hunter2-secret@shop.example.com/p/1', ...base }] },
      { selectorProblem },
    );
    expect(file.ok).toBe(false);
    if (file.ok) return;
    expect(file.errors).toHaveLength(1);
    expect(file.errors[0]).toMatch(
      joinRegExp(
        /^canaries\[0\]\.url: "https:\/\/\*\*\*@shop\.example\.com\/p\/1" holds /,
        /credentials \(user:password@\); page credentials are not supported/,
      ),
    );
    expect(file.errors[0]).not.toContain('hunter2');
  });

  test('other URL refusals never echo a secret either', () => {
    const errors = (url: string) => {
      const result = parseCanaryDefinition(
        { ...base, url },
        { selectorProblem, site: 'shop.example.com', reach: { hosts: [], ranges: [] } },
      );
      return result.ok ? [] : result.errors;
    };
    expect(errors('ftp://u:hunter2-secret@shop.example.com/p?token=t0ken-secret')).toEqual([
      'url: "ftp://***@shop.example.com/p?token=***" must start with http:// or https://',
    ]);
    const elsewhere = errors('https://intranet.example.net/p?token=t0ken-secret');
    expect(elsewhere).toHaveLength(1);
    expect(elsewhere[0]).toMatch(
      /^url: "https:\/\/intranet\.example\.net\/p\?token=\*\*\*" is not on shop\.example\.com; /,
    );
  });

  test(
    'secret query parameters are accepted (ordinary pages ' + 'carry ?key= and ?page_token=), and stored as written',
    () => {
      const url = `https://shop.example.com/p/1?key=shoes&token=${TOKEN}`;
      expect(parseCanaryDefinition({ ...base, url }, { selectorProblem })).toMatchObject({
        ok: true,
        definition: { url },
      });
    },
  );

  test(
    'a stored definition with credentials (defined before the rule) still loads, so listing and running keep ' +
      'working',
    () => {
      const url = 'https://crawler:hunter2-secret@shop.example.com/p/1';
      expect(readStoredDefinition({ name: 'old', url, interval: '15m', ...base })).toMatchObject({
        ok: true,
        definition: { url },
      });
    },
  );
});

describe('pageUrlSecrets and the cleaner', () => {
  test('the secrets of a URL: user info and secret query values, as written and decoded', () => {
    expect(pageUrlSecrets('https://us%20er:pw@shop.example.com/p?lang=en&token=a%2Bb+c&sig=')).toEqual([
      'us%20er',
      'us er',
      'pw',
      'a%2Bb+c',
      'a+b c',
    ]);
    expect(pageUrlSecrets('https://shop.example.com/p?lang=en')).toEqual([]);
  });

  test('a URL quoted in text, cut short by an excerpt limit, is masked up to where it ends', () => {
    const clean = pageTextCleaner(`https://shop.example.com/p?token=${TOKEN}`);
    expect(clean(`link @href: "https://shop.example.com/p?token=${TOKEN.slice(0, 6)}…"`)).toBe(
      'link @href: "https://shop.example.com/p?token=***',
    );
    // JSON-escaped in a check's shown value
    const quoted = pageTextCleaner('https://shop.example.com/p?token=ab"cd\\ef');
    expect(quoted(`got ${JSON.stringify('token ab"cd\\ef here')}`)).toBe('got "token *** here"');
  });

  test('a page echoing its own URL: the run keeps its verdict, its texts lose the secret', () => {
    const url = `https://shop.example.com/p/1?lang=en&token=${TOKEN}`;
    const page = productPage().replace(
      '</head>',
      `<link rel="canonical" href="${url.replace(/&/g, '&amp;')}"><meta name="req" content="${TOKEN}"></head>`,
    );
    const checks = [
      {
        kind: 'css' as const,
        selector: 'link[rel=canonical]',
        attr: 'href',
        assert: { op: 'matches' as const, pattern: '^https://shop' },
      },
      {
        kind: 'css' as const,
        selector: 'meta[name=req]',
        attr: 'content',
        assert: { op: 'equals' as const, value: 'something else' },
      },
    ];
    const fetched: FetchOutcome = {
      kind: 'response',
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: page,
      bytes: page.length,
      truncated: false,
      latencyMs: 5,
      viaProxy: false,
    };
    const verdict = judgeCanary(fetched, checks, compileClassifier(), parseHtml);
    const run: CanaryRun = {
      ...verdict,
      outcome: verdict.classification.outcome,
      rule: verdict.classification.rule,
      route: 'direct',
      countsForSite: true,
      status: 200,
      latencyMs: 5,
      bytes: page.length,
      ranAt: new Date(),
      event: null,
    };
    // The raw verdict quotes the secret: the page echoed it.
    expect(JSON.stringify(run)).toContain(TOKEN);
    const cleaned = withoutPageSecrets(run, pageTextCleaner(url));
    expect(JSON.stringify(cleaned)).not.toContain(TOKEN);
    expect(cleaned.result).toBe('mismatch');
    expect(cleaned.checks.map((c) => c.ok)).toEqual(run.checks.map((c) => c.ok));
    expect(cleaned.evidence).toContain('got "***"');
  });
});
