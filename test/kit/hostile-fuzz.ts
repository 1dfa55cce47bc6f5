/**
 * Hostile input for the fuzz suites, shared by the pure validators' properties here and the
 * live workflow's (test/integration/fuzz-decisions.test.ts): text that has broken parsers and stores
 * before (NUL, lone surrogates, control and line-break characters, invisible and full-width letters,
 * prototype keys, megabyte strings), numbers at the edges (NaN, ±Infinity, -0, 2^53, subnormals),
 * deep nesting, and the checks every refusal must pass (one line, bounded, well formed).
 */
import fc from 'fast-check';
import { runs } from './sizes';
import { isWellFormed } from '@target-health/crawler/events/well-formed';

/**
 * Case count of every pure fuzz property: 10,000 (at least that many each). TH_FUZZ_UNIT_RUNS
 * changes it for a longer hunt (or a quick look while writing a property).
 */
export const FUZZ_RUNS = Number(process.env.TH_FUZZ_UNIT_RUNS ?? runs(10_000));

/** TH_FUZZ_SEED replays a failure (fast-check prints the seed and path); otherwise a new seed each run. */
export const fuzzParameters = (): { numRuns: number; seed?: number; path?: string } => ({
  numRuns: FUZZ_RUNS,
  ...(process.env.TH_FUZZ_SEED !== undefined ? { seed: Number(process.env.TH_FUZZ_SEED) } : {}),
  ...(process.env.TH_FUZZ_PATH !== undefined ? { path: process.env.TH_FUZZ_PATH } : {}),
});

/** Characters and pieces that have broken validators, stores or terminals before. */
export const nastyPiece = fc.constantFrom(
  '\u0000',
  '\u0001',
  '\u0007',
  '\u001b[31m',
  '\u007f',
  '\ud800',
  '\udfff',
  '\ud83d',
  '\ud83d\ude00',
  '\u200b',
  '\u200e',
  '\u202e',
  '\ufeff',
  '\u00ad',
  '\u2028',
  '\u2029',
  '\u3000',
  'ｓｈｏｐ',
  'ü',
  '"',
  "'",
  '\\',
  '`',
  '\n',
  '\r\n',
  '\r',
  '\t',
  '\u000b',
  '\u0085',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '${x}',
  '%s',
  '<script>',
  '../',
  ',',
  ';',
  ':',
  '=',
  '@',
  '/',
  '.',
  '-',
  '--',
  'a',
  '0',
);

/** Short hostile text (no size extremes): pieces, arbitrary code units, arbitrary code points. */
export const nastyShortString: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      nastyPiece,
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    ),
    { maxLength: 10 },
  )
  .map((parts) => parts.join(''));

/** A string of `n` code units whose head and tail are hostile (megabyte strings must not be echoed). */
export const hugeString = (n: number): fc.Arbitrary<string> =>
  fc
    .tuple(nastyShortString, fc.constantFrom('x', 'ü', '\u0000', '\ud83d\ude00', ' ', '\n'), nastyShortString)
    .map(([head, fill, tail]) => {
      const body = fill.repeat(Math.max(0, Math.ceil((n - head.length - tail.length) / fill.length)));
      return `${head}${body}${tail}`;
    });

/** Hostile text, now and then long (5,000 / 70,000 code units) or a megabyte. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 60, arbitrary: nastyShortString },
  { weight: 2, arbitrary: fc.constantFrom(201, 2_001, 5_000, 70_000).chain(hugeString) },
  { weight: 1, arbitrary: hugeString(1 << 20) },
);

/** Numbers at the edges of every range the validators check, and arbitrary ones. */
export const edgeNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    1.5,
    2,
    99,
    100,
    100.0000001,
    10_000,
    10_001,
    65_535,
    65_536,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    2 ** 53 - 1,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    1e308,
    -1e308,
    5e-324,
    Number.MAX_VALUE,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
  ),
  fc.double(),
  fc.integer(),
  fc.integer({ min: -5, max: 20_000 }),
);

/** Plain JSON values as JSON.parse gives them, some with prototype keys as own properties. */
export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc
      .jsonValue({ maxDepth: 2 })
      .map(
        (v) =>
          JSON.parse(
            `{"__proto__": ${JSON.stringify(v)}, "constructor": {"prototype": ${JSON.stringify(v)}}}`,
          ) as unknown,
      ),
  },
);

/** Nested arrays or objects `depth` deep around `leaf` (built iteratively: no stack in the generator). */
export function nested(depth: number, kind: 'array' | 'object', leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** Any value a payload could hold once decoded, and some that only JavaScript callers can pass. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 4, arbitrary: edgeNumber },
  { weight: 3, arbitrary: jsonish },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      null,
      undefined,
      true,
      false,
      [],
      {},
      Object.create(null) as unknown,
      [1, 'a'],
      new Date(0),
      /x/,
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat({ max: 20_000 }), fc.constantFrom('array' as const, 'object' as const), edgeNumber)
      .map(([d, k, leaf]) => nested(d, k, leaf)),
  },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);

/** A key for an unknown field: prototype keys, hostile text, and now and then 1.5 MB of it. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'valueOf',
      'hasOwnProperty',
      '',
      ' ',
      'reason',
      'Who',
      'WHY',
      'who ',
      'revisit',
      'statusCode',
    ),
  },
  { weight: 10, arbitrary: nastyShortString },
  { weight: 1, arbitrary: hugeString(1_500_000) },
);

/**
 * An object with the given entries as own properties, `__proto__` included (as JSON.parse makes it:
 * an ordinary key, not the prototype), so the validators see exactly what a decoded payload holds.
 */
export function objectOf(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

// NUL, C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators: none may appear raw in a message.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Characters in a message that would break it over lines or into a terminal escape (none allowed). */
export function hasRawControl(text: string): boolean {
  return RAW_CONTROL.test(text);
}

/**
 * What is wrong with a refusal message as a person reads it: not one line, longer than `maxChars`, ill
 * formed (NUL, lone surrogate), or not matching `names` (what it must start with: the field it names).
 */
export function messageProblems(message: unknown, names: RegExp, maxChars: number): string[] {
  if (typeof message !== 'string') return [`not a string: ${String(message)}`];
  const problems: string[] = [];
  const shown = JSON.stringify(message.length > 300 ? `${message.slice(0, 300)}…` : message);
  if (message.trim() === '') problems.push('empty');
  if (hasRawControl(message)) problems.push(`holds a line break or control character: ${shown}`);
  if (message.length > maxChars) problems.push(`${message.length} characters (max ${maxChars}): ${shown}`);
  if (!isWellFormed(message)) problems.push(`not well formed: ${shown}`);
  if (!names.test(message)) problems.push(`does not name the field: ${shown}`);
  return problems;
}

/** What was thrown, for a failure message. */
export function describeThrown(err: unknown): string {
  return err instanceof Error
    ? `${err.name}: ${err.message.slice(0, 300)}`
    : typeof err === 'string'
      ? err
      : (JSON.stringify(err) ?? typeof err);
}

/** Runs `run`; returns what it threw (or undefined), so a property can say which error class is allowed. */
export function thrownBy(run: () => unknown): unknown {
  try {
    run();
    return undefined;
  } catch (err) {
    return err ?? new Error('threw a nullish value');
  }
}
