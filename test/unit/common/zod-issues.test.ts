/**
 * The shared zod-issue formatter: one line per problem naming the field, and nothing it echoes from the
 * input can make a message large or ill-formed (refused payloads echoing a 1.5 MB key wedged
 * a workflow whose state kept the refusals).
 */
import fc from 'fast-check';
import { z } from 'zod';
import {
  MAX_ECHO_CHARS,
  MAX_LINE_CHARS,
  MAX_MESSAGE_CHARS,
  capText,
  describeValue,
  formatIssues,
  issueLines,
} from '@target-health/crawler/events/zod-issues';
import { isWellFormed } from '@target-health/crawler/events/well-formed';
import { runs } from '../../kit/sizes';

const decision = z.strictObject({ who: z.string(), why: z.string() });
const issuesOf = (schema: z.ZodType, input: unknown) => {
  const r = schema.safeParse(input);
  if (r.success) throw new Error('expected a refusal');
  return r.error;
};

describe('formatIssues', () => {
  test('names the field and the problem; numbers in paths as indices', () => {
    const schema = z.object({
      routes: z.array(z.object({ requests: z.int().min(0, { error: 'expected a non-negative integer' }) })),
    });
    expect(formatIssues(issuesOf(schema, { routes: [{ requests: 1 }, { requests: -1 }] }), { prefix: 'current' })).toBe(
      'current.routes[1].requests: expected a non-negative integer',
    );
  });

  test('unknown keys are named in one line without knownKeys, with a hint per key with them', () => {
    expect(formatIssues(issuesOf(decision, { who: 'a', why: 'b', reason: 'c' }))).toBe('unknown field "reason"');
    expect(formatIssues(issuesOf(decision, { who: 'a', why: 'b', reason: 'c', mode: 'd' }))).toBe(
      'unknown fields "reason", "mode"',
    );
    expect(
      issueLines(issuesOf(decision, { who: 'a', why: 'b', whoo: 'c' }), {
        root: 'decision',
        knownKeys: () => ['who', 'why'],
      }),
    ).toEqual(['whoo: unknown field; did you mean "who"?']);
  });

  test('a 1.5 MB unknown key is echoed as its first characters and an ellipsis', () => {
    const key = 'k'.repeat(1_500_000);
    const message = formatIssues(issuesOf(decision, { who: 'a', why: 'b', [key]: 1 }));
    expect(message).toBe(`unknown field "${'k'.repeat(MAX_ECHO_CHARS - 1)}…"`);
    const line = issueLines(issuesOf(decision, { who: 'a', why: 'b', [key]: 1 }), {
      knownKeys: () => ['who', 'why'],
    })[0]!;
    expect(line.length).toBeLessThanOrEqual(MAX_LINE_CHARS);
    expect(line).toMatch(/^"k{79}…": unknown field; known fields: who, why$/);
  });

  test('many unknown keys: five named, the rest counted', () => {
    const input: Record<string, unknown> = { who: 'a', why: 'b' };
    for (let i = 0; i < 10_000; i++) input[`x${i}`] = i;
    expect(formatIssues(issuesOf(decision, input))).toBe('unknown fields "x0", "x1", "x2", "x3", "x4" and 9995 more');
    expect(issueLines(issuesOf(decision, input), { knownKeys: () => ['who', 'why'] })).toHaveLength(6);
  });

  test('many problems: the message stops at MAX_MESSAGE_CHARS and says how many more', () => {
    const schema = z.array(z.number({ error: 'expected a number' }));
    const message = formatIssues(
      issuesOf(
        schema,
        Array.from({ length: 1000 }, () => 'x'),
      ),
      { prefix: 'values' },
    );
    expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(message).toMatch(
      /^values\[0\]: expected a number; values\[1\]: expected a number; .*; and \d+ more problems$/,
    );
  });

  test('any input, any keys: every line well-formed and bounded, the message bounded', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.constantFrom('\u0000', '\ud800', 'a\udc00b', '😀'.repeat(100)),
    );
    const schema = z.strictObject({ a: z.number(), b: z.object({ c: z.strictObject({ d: z.string() }) }) });
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.anything({ maxDepth: 2 }), { maxKeys: 8 }),
        fc.dictionary(key, fc.anything({ maxDepth: 2 }), { maxKeys: 8 }),
        (top, nested) => {
          const r = schema.safeParse({ ...top, b: { c: nested } });
          if (r.success) return;
          const lines = [...issueLines(r.error), ...issueLines(r.error, { root: 'x', knownKeys: () => ['a', 'b'] })];
          for (const line of lines) {
            expect(line.length).toBeLessThanOrEqual(MAX_LINE_CHARS);
            expect(isWellFormed(line)).toBe(true);
          }
          const message = formatIssues(r.error, { prefix: 'p' });
          expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
          expect(isWellFormed(message)).toBe(true);
        },
      ),
      { numRuns: runs(10_000) },
    );
  });
});

describe('capText and describeValue', () => {
  test('cut on a code-point boundary: an emoji straddling the cut is dropped whole', () => {
    const text = `${'a'.repeat(78)}😀tail`; // the emoji's two halves at 78 and 79
    expect(capText(text)).toBe(`${'a'.repeat(78)}…`);
    expect(isWellFormed(capText(`${'a'.repeat(77)}😀tail`))).toBe(true);
  });

  test('NUL and lone surrogates never come through', () => {
    expect(isWellFormed(capText('a\u0000b\ud800c'))).toBe(true);
    expect(describeValue('\udc00'.repeat(500))).toMatch(/^"\uFFFD+…"$/);
    expect(describeValue('x'.repeat(1_000_000)).length).toBe(62);
  });
});
