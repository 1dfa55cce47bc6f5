/**
 * The marker file's validation (every problem names its field) and its merge with the built-in catalogue:
 * additions first, replacements in the built-in's place, disabled markers gone.
 */
import { compileClassifier } from '@target-health/crawler/events/classify';
import { catalogueFromText, mergeMarkers, parseMarkerFile } from '../../../core/signals/marker-file';
import type { MarkerSpecInput } from '@target-health/crawler/events/marker-spec';

const BUILT_IN: MarkerSpecInput[] = [
  { id: 'a-challenge', vendor: 'A', kind: 'challenge', bodyAny: ['a-token'] },
  { id: 'b-block', vendor: 'B', kind: 'block', bodyAny: ['b-token'] },
  { id: 'c-block', vendor: 'C', kind: 'block', bodyAny: ['c-token'] },
];

const errorsOf = (input: unknown): string[] => {
  const r = parseMarkerFile(input, BUILT_IN);
  return r.ok ? [] : r.errors;
};

describe('parseMarkerFile: refused with the field named', () => {
  it.each<[string, unknown, RegExp]>([
    [
      'catastrophic regex',
      { version: 1, markers: [{ id: 'x', vendor: 'X', kind: 'block', bodyRegex: '(a+)+b' }] },
      /^markers\[0\]\.bodyRegex: has a quantified group containing a quantifier/,
    ],
    [
      'invalid regex',
      { version: 1, markers: [{ id: 'x', vendor: 'X', kind: 'block', titleRegex: '([' }] },
      /^markers\[0\]\.titleRegex: is not a valid regular expression/,
    ],
    [
      'unknown marker field',
      { version: 1, markers: [{ id: 'x', vendor: 'X', kind: 'block', bodyAny: ['xyz'], bodyanY: [] }] },
      /^markers\[0\]\.bodyanY: unknown field; did you mean "bodyAny"\?/,
    ],
    [
      'unknown top-level field',
      { version: 1, markers: [], disabled: ['b-block'] },
      /^disabled: unknown field; did you mean "disable"\?/,
    ],
    ['wrong version', { version: 2, markers: [] }, /^version: must be the file format version, 1 \(got 2\)/],
    ['missing version', { markers: [] }, /^version: is required/],
    [
      'marker without a condition',
      { version: 1, markers: [{ id: 'x', vendor: 'X', kind: 'block' }] },
      /^markers\[0\]: needs at least one of bodyAll/,
    ],
    [
      'unknown disabled id',
      { version: 1, disable: ['b-block', 'nope'] },
      /^disable\[1\]: unknown built-in marker id "nope"/,
    ],
    [
      'an id twice',
      {
        version: 1,
        markers: [
          { id: 'x', vendor: 'X', kind: 'block', bodyAny: ['xyz'] },
          { id: 'x', vendor: 'X', kind: 'block', bodyAny: ['xyz'] },
        ],
      },
      /^markers\[1\]\.id: "x" is used by markers\[0\] too/,
    ],
    [
      'replaced and disabled',
      { version: 1, markers: [{ id: 'b-block', vendor: 'B', kind: 'block', bodyAny: ['bee'] }], disable: ['b-block'] },
      /^disable\[0\]: "b-block" is also replaced by markers\[0\]/,
    ],
  ])('%s', (_what, input, message) => {
    const errors = errorsOf(input);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatch(message);
  });

  it('a JSON syntax error says so', () => {
    const r = catalogueFromText('{"version": 1,', 'f.json', BUILT_IN);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatch(/^is not valid JSON/);
  });

  it('a valid file passes, with defaults for the lists', () => {
    expect(parseMarkerFile({ version: 1 }, BUILT_IN)).toEqual({
      ok: true,
      file: { version: 1, markers: [], disable: [] },
    });
  });
});

describe('mergeMarkers', () => {
  it('puts additions first, replaces in place, leaves disabled markers out', () => {
    const parsed = parseMarkerFile(
      {
        version: 1,
        markers: [
          { id: 'c-block', vendor: 'C', kind: 'block', bodyAny: ['c-new'] },
          { id: 'z-new', vendor: 'Z', kind: 'challenge', bodyAny: ['z-token'] },
        ],
        disable: ['a-challenge'],
      },
      BUILT_IN,
    );
    if (!parsed.ok) throw new Error(parsed.errors.join('; '));
    const merged = mergeMarkers(BUILT_IN, parsed.file);
    expect(merged.map((m) => m.id)).toEqual(['z-new', 'b-block', 'c-block']);
    expect(merged[2]!.bodyAny).toEqual(['c-new']);
  });

  it('the merged catalogue classifies: the replaced built-in no longer matches its old text', () => {
    const result = catalogueFromText(
      JSON.stringify({
        version: 1,
        markers: [
          {
            id: 'cloudflare-mitigated-header',
            vendor: 'Cloudflare',
            kind: 'challenge',
            headers: [{ name: 'x-never-sent' }],
          },
        ],
      }),
      'deploy.json',
    );
    if (!result.ok) throw new Error(result.errors.join('; '));
    expect(result.catalogue.source).toBe('deploy.json');
    const headers = { 'cf-mitigated': 'challenge' };
    expect(compileClassifier()({ status: 200, headers }).outcome).toBe('challenge');
    expect(compileClassifier({}, result.catalogue)({ status: 200, headers }).outcome).toBe('ok');
  });
});
