import {
  classifyOutcome,
  compileClassifier,
  SiteClassifierConfigError,
  type SiteClassifierConfigInput,
} from '@target-health/crawler/events';
import { event, page, pageEvent } from './helpers';

const SIZE_NORM = { medianBytes: 150_000, samples: 40 };
const RECORDS_NORM = { usualRecordsRate: 0.98, samples: 120 };

describe('classifyOutcome: one outcome class per rule, each with its reason', () => {
  it('explicit outcome from the crawler wins over everything', () => {
    expect(classifyOutcome(event({ status: 200, outcome: 'challenge' }))).toEqual({
      outcome: 'challenge',
      rule: 'explicit',
      reason: 'explicit outcome from crawler',
    });
    const withReason = classifyOutcome(
      pageEvent('cloudflare-just-a-moment.html', {
        status: 403,
        outcome: 'ok',
        outcomeReason: 'solved challenge in browser',
      }),
    );
    expect(withReason).toEqual({
      outcome: 'ok',
      rule: 'explicit',
      reason: 'explicit outcome from crawler: solved challenge in browser',
    });
  });

  it('connection reset is a hard block', () => {
    expect(classifyOutcome(event({ status: undefined, networkError: 'connection_reset' }))).toEqual({
      outcome: 'hard_block',
      rule: 'network_error',
      reason: 'connection reset (the site or its protection dropped the connection)',
      evidence: { networkError: 'connection_reset' },
    });
  });

  it.each([
    ['timeout', 'network error: timeout'],
    ['dns', 'network error: DNS resolution failed'],
    ['tls', 'network error: TLS handshake failed'],
    ['proxy', 'network error: proxy failure (a route problem, not the site)'],
    ['other', 'network error: other'],
  ] as const)('network error %s is an error', (networkError, reason) => {
    expect(classifyOutcome(event({ status: undefined, networkError }))).toEqual({
      outcome: 'error',
      rule: 'network_error',
      reason,
      evidence: { networkError },
    });
  });

  it('403 without a challenge is a hard block', () => {
    expect(classifyOutcome(event({ status: 403 }))).toEqual({
      outcome: 'hard_block',
      rule: 'status',
      reason: 'status 403 (forbidden: explicit refusal)',
      evidence: { status: 403 },
    });
  });

  it('429 is a hard block', () => {
    expect(classifyOutcome(event({ status: 429 }))).toMatchObject({
      outcome: 'hard_block',
      reason: 'status 429 (too many requests: rate limited)',
    });
  });

  it('403 carrying a challenge is a challenge', () => {
    const result = classifyOutcome(
      pageEvent('datadome-captcha.html', { status: 403, headers: { 'x-datadome': 'protected' } }),
    );
    expect(result).toEqual({
      outcome: 'challenge',
      rule: 'challenge_marker',
      reason: 'DataDome challenge on status 403: marker datadome-captcha matched "captcha-delivery.com"',
      evidence: { markerId: 'datadome-captcha', vendor: 'DataDome', matched: '"captcha-delivery.com"', status: 403 },
    });
  });

  it('503 carrying a challenge is a challenge; a bare 503 is an error', () => {
    expect(classifyOutcome(pageEvent('cloudflare-just-a-moment.html', { status: 503 })).outcome).toBe('challenge');
    expect(classifyOutcome(event({ status: 503 }))).toEqual({
      outcome: 'error',
      rule: 'status',
      reason: 'status 503 (server error)',
      evidence: { status: 503 },
    });
  });

  it('a 503 "Just a moment..." without other Cloudflare tokens is still a challenge (weak title, non-2xx)', () => {
    const result = classifyOutcome(
      event({ status: 503, bodySample: '<html><head><title>Just a moment...</title></head><body></body></html>' }),
    );
    expect(result).toMatchObject({
      outcome: 'challenge',
      evidence: { markerId: 'cloudflare-just-a-moment', corroboratedBy: 'status 503' },
    });
  });

  it('2xx with a challenge page is a challenge', () => {
    expect(classifyOutcome(pageEvent('cloudflare-just-a-moment.html', { status: 200 }))).toMatchObject({
      outcome: 'challenge',
      reason: 'Cloudflare challenge on status 200: marker cloudflare-chl-opt matched "cf_chl_opt"',
    });
  });

  it('2xx with a block page is a soft block', () => {
    expect(classifyOutcome(pageEvent('generic-unusual-traffic.html'))).toEqual({
      outcome: 'soft_block',
      rule: 'block_marker',
      reason:
        'status 200 carrying a block page: marker generic-block-text matched "unusual traffic from your ' +
        'computer network" (weak marker, corroborated by short page (906 bytes))',
      evidence: {
        markerId: 'generic-block-text',
        vendor: 'generic',
        matched: '"unusual traffic from your computer network"',
        corroboratedBy: 'short page (906 bytes)',
        status: 200,
      },
    });
  });

  it('a title alone can reveal a block page (title from the event or from the body)', () => {
    expect(classifyOutcome(event({ title: 'Access Denied', bytes: 50_000 }))).toMatchObject({
      outcome: 'soft_block',
      evidence: { markerId: 'generic-block-title', matched: 'title "access denied"' },
    });
    expect(
      classifyOutcome(event({ bodySample: '<TITLE>Access Denied &ndash; Example&#32;Shop</TITLE>', bytes: 50_000 })),
    ).toMatchObject({
      outcome: 'soft_block',
      evidence: { markerId: 'generic-block-title', matched: 'title "access denied – example shop"' },
    });
  });

  it('a 4xx block page other than 403/429 is a hard block attributed to the vendor', () => {
    expect(classifyOutcome(pageEvent('akamai-access-denied.html', { status: 406 }))).toMatchObject({
      outcome: 'hard_block',
      rule: 'block_marker',
      reason: expect.stringMatching(/^status 406 refused by Akamai marker akamai-reference matched /),
    });
  });

  it('vendor headers on a 403 attribute the refusal without changing the outcome', () => {
    expect(
      classifyOutcome(event({ status: 403, headers: { server: 'cloudflare', 'cf-ray': '8e0c1d2e3f4a5b6c-FRA' } })),
    ).toMatchObject({
      outcome: 'hard_block',
      evidence: { markerId: 'cloudflare-refusal-header', vendor: 'Cloudflare' },
    });
    // The same headers on a 200 are every normal response of a Cloudflare site.
    expect(classifyOutcome(event({ status: 200, headers: { server: 'cloudflare' } })).outcome).toBe('ok');
    expect(
      classifyOutcome(event({ status: 200, headers: { 'x-datadome': 'protected', 'set-cookie': '_px3=abc; path=/' } }))
        .outcome,
    ).toBe('ok');
  });

  it('other 2xx/3xx are ok, other 4xx/5xx are errors', () => {
    expect(classifyOutcome(event({ status: 204 }))).toMatchObject({ outcome: 'ok', reason: 'status 204' });
    expect(classifyOutcome(event({ status: 301 }))).toMatchObject({ outcome: 'ok', reason: 'status 301' });
    expect(classifyOutcome(event({ status: 404 }))).toMatchObject({
      outcome: 'error',
      reason: 'status 404 (client error)',
    });
    expect(classifyOutcome(event({ status: 500 }))).toMatchObject({
      outcome: 'error',
      reason: 'status 500 (server error)',
    });
  });

  it('a redirect to a captcha is a challenge', () => {
    expect(
      classifyOutcome(
        event({ status: 302, headers: { location: 'https://geo.captcha-delivery.com/captcha/?initialCid=x' } }),
      ),
    ).toMatchObject({ outcome: 'challenge', evidence: { markerId: 'redirect-to-captcha' } });
  });
});

describe('size norm soft blocks', () => {
  const nearEmpty = page('near-empty.html');

  it('a 2xx far below the median for the page type is a soft block', () => {
    const result = classifyOutcome(event({ bodySample: nearEmpty, bytes: 92 }), { sizeNorm: SIZE_NORM });
    expect(result).toEqual({
      outcome: 'soft_block',
      rule: 'size_norm',
      reason:
        'status 200 but 92 bytes, below 0.2 × the median of 150000 bytes for "product" pages on this site (40 samples)',
      evidence: { status: 200, bytes: 92, medianBytes: 150_000, sizeRatio: 0.2, samples: 40 },
    });
  });

  it('needs enough samples behind the norm', () => {
    expect(classifyOutcome(event({ bytes: 92 }), { sizeNorm: { medianBytes: 150_000, samples: 19 } }).outcome).toBe(
      'ok',
    );
  });

  it('a size at or above the ratio is ok; no bytes means no judgement', () => {
    expect(classifyOutcome(event({ bytes: 30_000 }), { sizeNorm: SIZE_NORM }).outcome).toBe('ok');
    expect(classifyOutcome(event({ bytes: 29_999 }), { sizeNorm: SIZE_NORM }).outcome).toBe('soft_block');
    expect(classifyOutcome(event({}), { sizeNorm: SIZE_NORM }).outcome).toBe('ok');
  });

  it('does not apply to non-2xx', () => {
    expect(classifyOutcome(event({ status: 304, bytes: 0 }), { sizeNorm: SIZE_NORM }).outcome).toBe('ok');
  });

  it('ignores nonsense norms instead of throwing', () => {
    expect(classifyOutcome(event({ bytes: 10 }), { sizeNorm: { medianBytes: Number.NaN, samples: 50 } }).outcome).toBe(
      'ok',
    );
    expect(classifyOutcome(event({ bytes: 10 }), { sizeNorm: { medianBytes: 0, samples: 50 } }).outcome).toBe('ok');
  });
});

describe('empty extraction soft blocks', () => {
  it('an empty extraction where the page type usually yields records is a soft block', () => {
    const result = classifyOutcome(event({ extraction: { result: 'empty' } }), { recordsNorm: RECORDS_NORM });
    expect(result).toEqual({
      outcome: 'soft_block',
      rule: 'empty_extraction',
      reason:
        'status 200 but the extraction was empty, where "product" pages on this site yield records 98% of the ' +
        'time (120 samples)',
      evidence: { status: 200, usualRecordsRate: 0.98, samples: 120 },
    });
  });

  it('zero valid records with result ok counts as empty', () => {
    expect(
      classifyOutcome(event({ extraction: { result: 'ok', validRecords: 0 } }), { recordsNorm: RECORDS_NORM }).rule,
    ).toBe('empty_extraction');
  });

  it('is not judged where empty results are normal or the norm is thin', () => {
    expect(
      classifyOutcome(event({ extraction: { result: 'empty' } }), {
        recordsNorm: { usualRecordsRate: 0.6, samples: 500 },
      }).outcome,
    ).toBe('ok');
    expect(
      classifyOutcome(event({ extraction: { result: 'empty' } }), { recordsNorm: { usualRecordsRate: 1, samples: 5 } })
        .outcome,
    ).toBe('ok');
    expect(classifyOutcome(event({ extraction: { result: 'empty' } })).outcome).toBe('ok');
  });

  it('a schema mismatch is a parser problem, not a soft block', () => {
    expect(
      classifyOutcome(event({ extraction: { result: 'schema_mismatch', validRecords: 0 } }), {
        recordsNorm: RECORDS_NORM,
      }).outcome,
    ).toBe('ok');
  });
});

describe('per-site configuration', () => {
  it('status overrides replace what a bare status means', () => {
    const config: SiteClassifierConfigInput = { statusOverrides: { '404': 'soft_block', '403': 'ok' } };
    expect(classifyOutcome(event({ status: 404 }), { config })).toEqual({
      outcome: 'soft_block',
      rule: 'status_override',
      reason: 'site override: status 404 counts as soft_block',
      evidence: { status: 404 },
    });
    expect(classifyOutcome(event({ status: 403 }), { config }).outcome).toBe('ok');
    // Vendor attribution by header is status-level evidence, so the override still applies...
    expect(classifyOutcome(event({ status: 403, headers: { server: 'cloudflare' } }), { config }).outcome).toBe('ok');
    // ...but an override never hides a challenge page served with that status.
    expect(classifyOutcome(pageEvent('cloudflare-just-a-moment.html', { status: 403 }), { config }).outcome).toBe(
      'challenge',
    );
  });

  it('extra markers are added and take precedence', () => {
    const classify = compileClassifier({
      extraMarkers: [
        { id: 'shop-verify', vendor: 'Example Shop', kind: 'challenge', bodyAny: ['/__verify'] },
        { id: 'shop-blocked', vendor: 'Example Shop', kind: 'block', bodyRegex: 'data-blocked="(?:true|1)"' },
      ],
    });
    expect(classify(pageEvent('turnstile.html'))).toMatchObject({
      outcome: 'challenge',
      reason: 'Example Shop challenge on status 200: marker shop-verify matched "/__verify"',
    });
    expect(classify(event({ bodySample: '<div data-blocked="true">', bytes: 90_000 }))).toMatchObject({
      outcome: 'soft_block',
      evidence: { markerId: 'shop-blocked', vendor: 'Example Shop' },
    });
  });

  it('disabled markers are ignored', () => {
    const config: SiteClassifierConfigInput = { disabledMarkers: ['generic-block-text'] };
    expect(classifyOutcome(pageEvent('generic-unusual-traffic.html'), { config }).outcome).toBe('ok');
    expect(classifyOutcome(pageEvent('generic-unusual-traffic.html')).outcome).toBe('soft_block');
  });

  it('thresholds are configurable', () => {
    const classify = compileClassifier({ sizeRatio: 0.5, minSizeSamples: 5, shortPageBytes: 0 });
    expect(classify(event({ bytes: 70_000 }), { sizeNorm: { medianBytes: 150_000, samples: 5 } }).outcome).toBe(
      'soft_block',
    );
    // With shortPageBytes 0 a weak marker on a 200 is never corroborated by size.
    expect(classify(pageEvent('generic-unusual-traffic.html')).outcome).toBe('ok');
  });

  it('rejects an invalid configuration with field-named errors', () => {
    let thrown: unknown;
    try {
      compileClassifier({
        disabledMarkers: ['cloudflare-chl'],
        statusOverrides: { '404': 'blocked' },
      } as unknown as SiteClassifierConfigInput);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SiteClassifierConfigError);
    expect((thrown as SiteClassifierConfigError).errors).toEqual([
      'statusOverrides.404: must be one of ok, hard_block, challenge, soft_block, error (got "blocked")',
    ]);
    expect(() => compileClassifier({ disabledMarkers: ['cloudflare-chl'] })).toThrow(
      'disabledMarkers[0]: unknown built-in marker id "cloudflare-chl"',
    );
  });

  it('caches the compiled classifier per config object', () => {
    const config: SiteClassifierConfigInput = { statusOverrides: { '404': 'soft_block' } };
    const first = classifyOutcome(event({ status: 404 }), { config });
    const second = classifyOutcome(event({ status: 404 }), { config });
    expect(second).toEqual(first);
  });
});

describe('large pages', () => {
  // Speed is measured by `npm run bench:store` (classification is on its hot path), not by a timer here.
  it('classifies a 64 KB page with a normal product at its start as ok', () => {
    const body = `${page('product-page.html')}${'<p>lorem ipsum dolor sit amet</p>'.repeat(2000)}`.slice(0, 64 * 1024);
    const e = event({ bodySample: body, bytes: 148_213 });
    expect(compileClassifier()(e).outcome).toBe('ok');
  });
});
