/**
 * Fuzzing the decision payloads: what a `resume`, `stop` or `pause` signal or update may
 * carry once decoded — arbitrary JSON, hostile text (NUL, lone surrogates, control characters, 1 MB
 * strings), prototype keys, 1.5 MB unknown keys, deep nesting, numbers at the edges (NaN, ±Infinity,
 * -0) — through `parseDecision`, the one check the workflow's handlers and the CLI share.
 *
 * Properties: it never throws; a refusal is one line, at most the formatter's cap (plus the kind),
 * well formed, and names the field (or says a JSON object is expected); an accepted decision is
 * storable (who and why without NUL, lone surrogates or control characters, trimmed, within their
 * lengths; numbers within their ranges) and is accepted the same after a JSON round trip (what the
 * Temporal data converter does between the CLI and the workflow). fast-check prints the seed and the
 * shrunk payload of any failure.
 */
import fc from 'fast-check';
import { DECISION_KINDS, type DecisionKind, parseDecision } from '../../../core/control/decisions';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { MAX_MESSAGE_CHARS } from '@target-health/crawler/events/zod-issues';
import {
  FUZZ_RUNS,
  fuzzParameters,
  anyValue,
  edgeNumber,
  hasRawControl,
  hostileKey,
  messageProblems,
  nastyShortString,
  nastyString,
  objectOf,
} from '../../kit/hostile-fuzz';

const FIELDS = ['who', 'why', 'mode', 'concurrency', 'revisitMultiplier'] as const;
const kind = fc.constantFrom(...DECISION_KINDS);

/** A plausible value of each field (so payloads often get past the first check), or anything. */
const plausible: Record<(typeof FIELDS)[number], fc.Arbitrary<unknown>> = {
  who: fc.oneof(
    fc.constantFrom('alice@example.com', ' bob ', 'on-call'),
    fc.string({ minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
  ),
  why: fc.oneof(
    fc.constantFrom('checked the terms', 'site calmed down\nsee ticket 12', 'x'.repeat(2_000)),
    fc.string({ minLength: 1, maxLength: 80 }),
  ),
  mode: fc.constantFrom('cautious', 'explicit', 'Cautious', 'fast', ''),
  concurrency: fc.oneof(fc.integer({ min: 0, max: 10_001 }), edgeNumber, fc.constantFrom('4', '4.0')),
  revisitMultiplier: fc.oneof(fc.double({ min: 0.5, max: 101, noNaN: true }), edgeNumber, fc.constantFrom('2')),
};

/** A payload built field by field (each plausible, hostile or absent) plus unknown keys. */
const fieldwisePayload = fc
  .tuple(
    fc.tuple(
      ...FIELDS.map((f) =>
        fc.option(
          fc.oneof(
            { weight: 4, arbitrary: plausible[f] },
            { weight: 1, arbitrary: anyValue },
            { weight: 1, arbitrary: nastyString },
          ),
          { nil: undefined, freq: 4 },
        ),
      ),
    ),
    fc.array(fc.tuple(hostileKey, anyValue), { maxLength: 3 }),
    fc.nat({ max: 3 }),
  )
  .map(([values, extras, extraWeight]) =>
    objectOf([
      ...FIELDS.flatMap((f, i) => (values[i] === undefined ? [] : [[f, values[i]] as const])),
      // Most payloads have no unknown key; some have several.
      ...(extraWeight === 0 ? extras : []),
    ]),
  );

/**
 * A kind with a payload close to a valid one: who and why always there (sometimes odd text), for
 * `resume` a cautious or an explicit mode with settings near their bounds; now and then a setting too
 * many or too few.
 */
const plausibleDecision: fc.Arbitrary<[DecisionKind, Record<string, unknown>]> = fc
  .tuple(
    kind,
    fc.oneof({ weight: 3, arbitrary: plausible.who }, { weight: 1, arbitrary: nastyShortString }),
    fc.oneof({ weight: 3, arbitrary: plausible.why }, { weight: 1, arbitrary: nastyShortString }),
    fc.oneof(
      fc.constant({}),
      fc.constant({ mode: 'cautious' }),
      fc.record({
        mode: fc.constantFrom('explicit', undefined),
        concurrency: fc.integer({ min: 1, max: 10_000 }),
        revisitMultiplier: fc.double({ min: 1, max: 100, noNaN: true }),
      }),
      fc.record(
        { mode: plausible.mode, concurrency: plausible.concurrency, revisitMultiplier: plausible.revisitMultiplier },
        { requiredKeys: [] },
      ),
    ),
  )
  .map(([k, who, why, settings]) => [
    k,
    objectOf(Object.entries({ who, why, ...(k === 'resume' ? settings : {}) }).filter(([, v]) => v !== undefined)),
  ]);

const payload: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fieldwisePayload },
  { weight: 1, arbitrary: anyValue },
);

const refusalNames = (k: DecisionKind) =>
  new RegExp(`^${k}: (expected a JSON object like |unknown fields? "|(?:${FIELDS.join('|')}): \\S)`);
const MAX_REFUSAL = MAX_MESSAGE_CHARS + 'resume: '.length;

// What the validator counts as control characters in who/why (tab and line breaks are allowed in why).
// eslint-disable-next-line no-control-regex
const WHY_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** What about an accepted decision could not be stored or shown on one line (none expected). */
function acceptedProblems(d: ReturnType<typeof parseDecision> & { ok: true }): string[] {
  const { who, why } = d.decision;
  const problems: string[] = [];
  if (!isWellFormed(who) || !isWellFormed(why)) problems.push('who/why not well formed');
  // `who` is an identity shown on one line (audit actor, workflow summaries, `status`): no control character at all.
  if (hasRawControl(who)) problems.push(`who holds a control character or line break: ${JSON.stringify(who)}`);
  if (WHY_CONTROL.test(why)) problems.push(`why holds a control character: ${JSON.stringify(why.slice(0, 80))}`);
  // Lengths are in characters (code points), as zod counts them: an emoji is one.
  const chars = (text: string): number => [...text].length;
  if (who !== who.trim() || chars(who) < 1 || chars(who) > 200)
    problems.push(`who ${JSON.stringify(who.slice(0, 80))}`);
  if (why !== why.trim() || chars(why) < 1 || chars(why) > 2_000) problems.push(`why of ${chars(why)} characters`);
  if (d.decision.kind === 'resume') {
    const m = d.decision.mode;
    if (m.mode === 'explicit') {
      if (!Number.isInteger(m.concurrency) || m.concurrency < 1 || m.concurrency > 10_000)
        problems.push(`concurrency ${m.concurrency}`);
      if (!Number.isFinite(m.revisitMultiplier) || m.revisitMultiplier < 1 || m.revisitMultiplier > 100)
        problems.push(`revisitMultiplier ${m.revisitMultiplier}`);
    } else if (m.mode !== 'cautious') problems.push(`mode ${JSON.stringify(m)}`);
  }
  return problems;
}

describe('decision payloads under fuzzing', () => {
  test(
    `parseDecision never throws; refusals are one bounded line naming the field; accepted decisions are storable ` +
      `(${FUZZ_RUNS} cases)`,
    () => {
      let accepted = 0;
      fc.assert(
        fc.property(fc.oneof(fc.tuple(kind, payload), plausibleDecision), ([k, p]) => {
          const result = parseDecision(k, p);
          if (result.ok) {
            accepted += 1;
            expect(result.decision.kind).toBe(k);
            expect(acceptedProblems(result)).toEqual([]);
          } else {
            expect(messageProblems(result.message, refusalNames(k), MAX_REFUSAL)).toEqual([]);
          }
        }),
        fuzzParameters(),
      );
      // Not a property that passes by refusing everything: a fair share gets through.
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 10);
    },
  );

  test(
    'an accepted payload is accepted alike after a JSON round trip, ' + `the data converter's (${FUZZ_RUNS} cases)`,
    () => {
      let accepted = 0;
      fc.assert(
        fc.property(plausibleDecision, ([k, p]) => {
          const direct = parseDecision(k, p);
          if (!direct.ok) return;
          accepted += 1;
          expect(parseDecision(k, JSON.parse(JSON.stringify(p)))).toEqual(direct);
        }),
        fuzzParameters(),
      );
      expect(accepted).toBeGreaterThan(FUZZ_RUNS / 5);
    },
  );

  test('a refused payload carrying a 1.5 MB unknown key is refused in a short line', () => {
    const huge = `${'k'.repeat(1_500_000)}`;
    for (const k of DECISION_KINDS) {
      const result = parseDecision(
        k,
        objectOf([
          ['who', 'alice'],
          ['why', 'x'],
          [huge, 1],
          ['__proto__', { polluted: true }],
        ]),
      );
      expect(result).toMatchObject({ ok: false });
      const message = (result as { message: string }).message;
      expect(message).toMatch(new RegExp(`^${k}: unknown fields "k+…", "__proto__"$`));
      expect(message.length).toBeLessThan(200);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
