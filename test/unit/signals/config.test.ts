import { CLASSIFIER_DEFAULTS, parseSiteClassifierConfig } from '@target-health/crawler/events';

const errorsOf = (input: unknown): string[] => {
  const result = parseSiteClassifierConfig(input);
  if (result.ok) throw new Error('expected errors');
  return result.errors;
};

describe('SiteClassifierConfig', () => {
  it('fills in defaults', () => {
    expect(parseSiteClassifierConfig({})).toEqual({
      ok: true,
      config: { extraMarkers: [], disabledMarkers: [], statusOverrides: {}, ...CLASSIFIER_DEFAULTS },
    });
  });

  it('normalises header names in extra markers and defaults evidence to strong', () => {
    const result = parseSiteClassifierConfig({
      extraMarkers: [
        { id: 'shop-waf', vendor: 'Shop', kind: 'block', headers: [{ name: 'X-Shop-WAF', contains: 'deny' }] },
      ],
    });
    expect(result.ok && result.config.extraMarkers[0]).toEqual({
      id: 'shop-waf',
      vendor: 'Shop',
      kind: 'block',
      evidence: 'strong',
      headers: [{ name: 'x-shop-waf', contains: 'deny' }],
    });
  });

  it.each<[string, unknown, string]>([
    ['unknown top-level field', { sizeratio: 0.3 }, 'sizeratio: unknown field; did you mean "sizeRatio"?'],
    [
      'ratio out of range',
      { sizeRatio: 2 },
      'sizeRatio: must be a fraction of the median size, > 0 and ≤ 1 (default 0.2) (got 2)',
    ],
    [
      'samples not an integer',
      { minSizeSamples: 2.5 },
      'minSizeSamples: must be a sample count ≥ 1 (default 20) (got 2.5)',
    ],
    [
      'bad status key',
      { statusOverrides: { '4xx': 'error' } },
      'statusOverrides.4xx: must be an HTTP status code like "404" as the key (got "4xx")',
    ],
    [
      'unknown disabled marker',
      { disabledMarkers: ['datadome'] },
      'disabledMarkers[0]: unknown built-in marker id "datadome"',
    ],
    [
      'marker without conditions',
      { extraMarkers: [{ id: 'x-1', vendor: 'X', kind: 'block' }] },
      'extraMarkers[0]: needs at least one of bodyAll, bodyAny, bodyRegex, titleRegex, headers',
    ],
    [
      'marker with a bad kind',
      { extraMarkers: [{ id: 'x-1', vendor: 'X', kind: 'captcha', bodyAny: ['abc'] }] },
      'extraMarkers[0].kind: must be "challenge" or "block" (got "captcha")',
    ],
    [
      'marker with a dangerous regex',
      { extraMarkers: [{ id: 'x-1', vendor: 'X', kind: 'block', bodyRegex: '(a+)+b' }] },
      'extraMarkers[0].bodyRegex: has a quantified group containing a quantifier',
    ],
    [
      'marker with a misspelt field',
      { extraMarkers: [{ id: 'x-1', vendor: 'X', kind: 'block', bodyany: ['abc'] }] },
      'extraMarkers[0].bodyany: unknown field; did you mean "bodyAny"?',
    ],
    [
      'marker id clashing with a built-in',
      { extraMarkers: [{ id: 'datadome-captcha', vendor: 'X', kind: 'block', bodyAny: ['abc'] }] },
      'extraMarkers[0].id: "datadome-captcha" is a built-in marker id',
    ],
    [
      'duplicate extra marker ids',
      {
        extraMarkers: [
          { id: 'x-1', vendor: 'X', kind: 'block', bodyAny: ['abc'] },
          { id: 'x-1', vendor: 'X', kind: 'block', bodyAny: ['def'] },
        ],
      },
      'extraMarkers[1].id: "x-1" is used by an earlier extra marker',
    ],
    [
      'needle too short',
      { extraMarkers: [{ id: 'x-1', vendor: 'X', kind: 'block', bodyAny: ['ab'] }] },
      'extraMarkers[0].bodyAny[0]: must be a text of at least 3 characters',
    ],
    ['not an object', 'strict', 'config: must be an object of classifier settings (got "strict")'],
  ])('%s', (_name, input, expected) => {
    const errors = errorsOf(input);
    expect(errors.some((e) => e.startsWith(expected))).toBe(true);
  });
});
