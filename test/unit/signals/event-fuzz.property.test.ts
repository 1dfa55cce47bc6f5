/**
 * Fuzzing the event boundary with fast-check (it prints the seed and the shrunk case on a
 * failure): NDJSON lines built from a valid event with hostile pieces spliced in — oversize strings,
 * deep nesting, NUL and lone surrogates, prototype keys, numeric edge cases, invisible and full-width
 * host spellings, unknown fields — and whole batches of them.
 *
 * Properties: nothing throws; every line is either one event or one rejection whose messages each name
 * a field (or say the line is not JSON / too long), short and well-formed; every accepted event is
 * storable (text without NUL or lone surrogates, numbers within their columns, time within the
 * horizon, an id); the fast parser equals the zod parser wherever it answers.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { parseNdjsonLines } from '../../../server/ingest/ndjson-batch';
import { DERIVED_ID_PREFIX } from '../../../server/db/signal-store/derived-id';
import { MAX_BYTES, MAX_INT32, parseEvent, type RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { fastParseEvent } from '@target-health/crawler/events/fast-parse';
import { EVENT_HORIZON } from '../../../core/signals/horizon';
import { isWellFormed as isStorableText } from '@target-health/crawler/events/well-formed';
import { runs } from '../../kit/sizes';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const RUNS = runs(10_000);

/** Pieces of text that have broken parsers and stores before. */
const nastyPiece = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '\u200b',
  '\ufeff',
  '\u00ad',
  'ｓｈｏｐ',
  '．',
  '。',
  'ü',
  '"',
  '\\',
  '\n',
  '\t',
  '__proto__',
  'constructor',
  ' ',
  'a',
  '.',
  '-',
  ':',
  '/',
);
const nastyString = fc.oneof(
  {
    weight: 30,
    arbitrary: fc
      .array(fc.oneof(nastyPiece, fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 })), {
        maxLength: 12,
      })
      .map((p) => p.join('')),
  },
  { weight: 1, arbitrary: fc.constantFrom(5_000, 70_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom(100, 70).map((n) => `${'ü'.repeat(n)}.example.com`) },
);

const edgeNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    99.999,
    MAX_INT32,
    MAX_INT32 + 1,
    2 ** 32,
    MAX_BYTES,
    MAX_BYTES + 1,
    2 ** 53 - 1,
    2 ** 53,
    1e21,
    1e308,
    -1e308,
    5e-324,
    599,
    600,
    999,
    1000,
    99,
    86_400_000,
    86_400_001,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** JSON text of a value that may be nested very deeply (JSON.parse copes; the parsers must too). */
const deepJson = fc
  .tuple(fc.nat({ max: 3_000 }), fc.constantFrom('[', '{"a":'))
  .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth));

/** Any JSON value, as text. */
const jsonValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: nastyString.map((s) => JSON.stringify(s)) },
  { weight: 3, arbitrary: edgeNumber.map((n) => JSON.stringify(n)) },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '[1,"a"]', '["a","b"]') },
  { weight: 1, arbitrary: deepJson },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.oneof(
            nastyPiece,
            fc.constantFrom(
              'country',
              'pool',
              'session',
              'result',
              'missingFields',
              'validRecords',
              'server',
              'Set-Cookie',
            ),
          ),
          nastyString,
        ),
        { maxLength: 4 },
      )
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
  },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 4 }).map((a) => JSON.stringify(a)) },
);

const FIELDS = [
  'eventId',
  'ts',
  'site',
  'route',
  'pageType',
  'status',
  'networkError',
  'latencyMs',
  'bytes',
  'retries',
  'credits',
  'extraction',
  'canary',
  'outcome',
  'outcomeReason',
  'headers',
  'bodySample',
  'title',
];

/** A valid event, as [key, JSON text] entries (text, so "__proto__" stays an ordinary key). */
const validEntries = fc
  .record({
    ts: fc.integer({ min: NOW - EVENT_HORIZON.maxAgeMs, max: NOW + EVENT_HORIZON.maxAheadMs }),
    pool: fc.integer({ min: 0, max: 100_000 }),
    status: fc.integer({ min: 100, max: 999 }),
    latency: fc.integer({ min: 0, max: 60_000 }),
    withId: fc.boolean(),
  })
  .map(
    ({ ts, pool, status, latency, withId }) =>
      [
        ...(withId ? [['eventId', JSON.stringify(`id-${ts}-${pool}`)]] : []),
        ['ts', String(ts)],
        ['site', '"shop.example.com"'],
        // A cardinality flood: a new pool per line is valid input (the store folds beyond its cap).
        ['route', JSON.stringify({ country: 'DE', pool: `pool-${pool}` })],
        ['status', String(status)],
        ['latencyMs', String(latency)],
      ] as Array<[string, string]>,
  );

/** What a hostile or careless crawler does to a line. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom(...FIELDS), value: jsonValue }),
  fc.record({
    kind: fc.constant('set' as const),
    key: fc.constantFrom('headers'),
    value: fc
      .array(
        fc.tuple(
          fc.oneof(nastyPiece, fc.constantFrom('Server', 'cf-mitigated', 'toString', 'hasOwnProperty')),
          fc.oneof(nastyString, fc.array(nastyString, { maxLength: 3 })),
        ),
        { maxLength: 5 },
      )
      .map((e) => `{${e.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`),
  }),
  fc.record({
    kind: fc.constant('set' as const),
    key: fc.constantFrom('extraction'),
    value: fc
      .record(
        {
          result: fc.constantFrom('ok', 'missing_fields', 'empty', 'x'),
          missingFields: fc.array(nastyString, { maxLength: 3 }),
          validRecords: edgeNumber,
        },
        { requiredKeys: ['result'] },
      )
      .map((x) => JSON.stringify(x)),
  }),
  fc.record({
    kind: fc.constant('set' as const),
    key: fc.constantFrom('site'),
    value: nastyString.map((s) => JSON.stringify(`${s}shop.example.com`)),
  }),
  fc.record({
    kind: fc.constant('set' as const),
    key: fc.oneof(nastyPiece, nastyString, fc.constantFrom('__proto__', 'constructor', 'statusCode', 'toString')),
    value: jsonValue,
  }),
  fc.record({ kind: fc.constant('drop' as const), key: fc.constantFrom(...FIELDS) }),
  fc.record({
    kind: fc.constant('raw' as const),
    text: fc.oneof(nastyString, fc.constantFrom('', '   ', '{', '[1]', 'null', '{"ts":', '{}')),
  }),
);

type Mutation =
  { kind: 'set'; key: string; value: string } | { kind: 'drop'; key: string } | { kind: 'raw'; text: string };

function lineOf(entries: Array<[string, string]>, mutations: readonly Mutation[]): string {
  let list = [...entries];
  for (const m of mutations) {
    if (m.kind === 'raw') return m.text;
    list = list.filter(([k]) => k !== m.key);
    if (m.kind === 'set') list.push([m.key, m.value]);
  }
  return `{${list.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

const hostileLine = fc
  .tuple(validEntries, fc.array(mutation, { maxLength: 3 }))
  .map(([entries, mutations]) => lineOf(entries, mutations as Mutation[]));

// A field path as the shared formatter writes it: plain names, or JSON-quoted odd ones, joined by "." and "[i]".
const NAME = String.raw`(?:[\w$-]+|"(?:[^"\\]|\\.)*")`;
const LINE_MESSAGE = new RegExp(
  String.raw`^(not valid JSON \(|longer than \d|not valid UTF-8 |${NAME}(?:\.${NAME}|\[\d+\])*: \S)`,
);

/** What is wrong with a rejection message (none: it names a field, is short and well-formed). */
function messageProblems(message: string): string[] {
  const problems: string[] = [];
  if (!LINE_MESSAGE.test(message)) problems.push(`does not name a field: ${message}`);
  if (message.length > 400) problems.push(`longer than 400 characters: ${message.slice(0, 80)}…`);
  if (!isStorableText(message)) problems.push(`not well-formed: ${JSON.stringify(message)}`);
  return problems;
}

const inRange = (v: number | undefined, max: number) => v === undefined || (Number.isInteger(v) && v >= 0 && v <= max);

/** What about an accepted event could not be stored (none: every text and number fits its column). */
function storageProblems(e: RequestOutcomeEvent): string[] {
  const problems: string[] = [];
  for (const text of [
    e.site,
    e.eventId,
    e.route.country,
    e.route.pool,
    e.route.session,
    e.pageType,
    e.outcomeReason,
    ...(e.extraction?.missingFields ?? []),
    e.bodySample,
    e.title,
    ...Object.values(e.headers ?? {}),
  ]) {
    if (text !== undefined && !isStorableText(text))
      problems.push(`text not storable: ${JSON.stringify(text.slice(0, 40))}`);
  }
  if (!/^[a-z0-9.-]{1,253}$/.test(e.site)) problems.push(`site ${e.site}`);
  if (
    e.eventId === undefined ||
    !(e.eventId.startsWith(DERIVED_ID_PREFIX) ? /^h1:[\w-]{22}$/ : /^[\x21-\x7e]{1,128}$/).test(e.eventId)
  )
    problems.push(`eventId ${e.eventId}`);
  if (e.ts < NOW - EVENT_HORIZON.maxAgeMs || e.ts > NOW + EVENT_HORIZON.maxAheadMs) problems.push(`ts ${e.ts}`);
  if (!(inRange(e.retries, MAX_INT32) && inRange(e.extraction?.validRecords, MAX_INT32) && inRange(e.bytes, MAX_BYTES)))
    problems.push('a number beyond its column');
  if (e.headers && Object.getPrototypeOf(e.headers) !== null) problems.push('headers with a prototype');
  return problems;
}

/**
 * Fails the property with the problems (jest's expect costs ~0.1 ms a call: too slow for 10,000 runs × many checks).
 */
function check(problems: readonly string[]): void {
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

test(
  'any line: one event or one rejection with clear messages, ' + `never a crash (${RUNS.toLocaleString('en')} lines)`,
  () => {
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(hostileLine, (line) => {
        const out = parseNdjsonLines([line], 7, { now: NOW });
        if (line.trim() === '')
          return check(
            out.blank === 1 && out.events.length + out.rejected.length === 0
              ? []
              : ['a blank line is not counted as blank'],
          );
        if (out.events.length + out.rejected.length !== 1)
          return check([`${out.events.length} events and ${out.rejected.length} rejections for one line`]);
        if (out.events.length === 1) {
          accepted += 1;
          return check([
            ...(out.lines[0] === 7 ? [] : [`line number ${out.lines[0]}`]),
            ...storageProblems(out.events[0]!),
          ]);
        }
        rejected += 1;
        const r = out.rejected[0]!;
        return check([
          ...(r.line === 7 ? [] : [`line number ${r.line}`]),
          ...(r.errors.length > 0 ? [] : ['no message']),
          ...r.errors.flatMap(messageProblems),
        ]);
      }),
      { numRuns: RUNS },
    );
    // Both outcomes must be common, or the generator tests little.
    expect(Math.min(accepted, rejected)).toBeGreaterThan(RUNS / 10);
  },
);

test(`the fast parser equals the zod parser wherever it answers (${RUNS.toLocaleString('en')} objects)`, () => {
  let fast = 0;
  fc.assert(
    fc.property(hostileLine, (line) => {
      let input: unknown;
      try {
        input = JSON.parse(line);
      } catch {
        return;
      }
      const slow = parseEvent(input);
      const quick = fastParseEvent(input);
      if (quick === undefined) return;
      fast += 1;
      check(
        slow.ok && isDeepStrictEqual(slow.event, quick)
          ? []
          : [`fast ${JSON.stringify(quick)} ≠ zod ${JSON.stringify(slow.ok ? slow.event : slow.errors)}`],
      );
    }),
    { numRuns: RUNS },
  );
  expect(fast).toBeGreaterThan(RUNS / 10);
});

test('a targeted mistake is named by its field', () => {
  fc.assert(
    fc.property(
      validEntries,
      fc.constantFrom(...FIELDS.filter((f) => f !== 'eventId')),
      jsonValue,
      (entries, key, value) => {
        const out = parseNdjsonLines([lineOf(entries, [{ kind: 'set', key, value }])], 1, { now: NOW });
        if (out.rejected.length === 0) return;
        const errors = out.rejected[0]!.errors;
        // The field itself, a field it must agree with (status ↔ networkError, outcomeReason → outcome), or the horizon
        // on ts.
        const related: Record<string, string[]> = {
          status: ['networkError'],
          networkError: ['status'],
          outcome: ['outcomeReason'],
        };
        const named = errors.some((e) =>
          [key, ...(related[key] ?? [])].some(
            (f) => e.startsWith(`${f}:`) || e.startsWith(`${f}.`) || e.startsWith(`${f}[`),
          ),
        );
        check(named ? [] : [`${key} not named in: ${errors.join(' | ')}`]);
      },
    ),
    { numRuns: RUNS },
  );
});

test('any batch: every line accounted for once, in order, rejections sorted by line', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          { weight: 3, arbitrary: validEntries.map((e) => lineOf(e, [])) },
          { weight: 1, arbitrary: hostileLine },
          { weight: 1, arbitrary: fc.constant('') },
        ),
        { maxLength: 60 },
      ),
      fc.nat({ max: 1_000 }),
      (lines, offset) => {
        const out = parseNdjsonLines(lines, offset + 1, { now: NOW });
        expect(out.events.length + out.rejected.length + out.blank).toBe(lines.length);
        const numbers = [...out.lines, ...out.rejected.map((r) => r.line)].sort((a, b) => a - b);
        expect(new Set(numbers).size).toBe(numbers.length);
        expect(out.rejected.map((r) => r.line)).toEqual([...out.rejected.map((r) => r.line)].sort((a, b) => a - b));
        expect(out.lines).toEqual([...out.lines].sort((a, b) => a - b));
        for (const n of numbers) expect(lines[n - offset - 1]!.trim()).not.toBe('');
      },
    ),
    { numRuns: runs(2_000) },
  );
});
