/**
 * Size limits docs/security.md lists that no other test pins down at their edge: what a person's
 * decision may carry, and how big a canary definition and a canary config file may be. The value at
 * the limit is accepted, one past it refused with one line naming the field.
 */
import {
  MAX_CANARIES_PER_FILE,
  MAX_EXPECTATIONS,
  TIMEOUT_LIMITS,
  parseCanaryDefinition,
  parseCanaryFile,
} from '../../../core/canaries/definition';
import { parseDecision } from '../../../core/control/decisions';

const selectorProblem = (): undefined => undefined;
const define = (input: Record<string, unknown>) =>
  parseCanaryDefinition(
    { url: 'https://shop.example.com/p/1', expect: [{ status: 200 }], ...input },
    { selectorProblem },
  );

describe('decisions', () => {
  test('who: at most 200 characters; why: at most 2000', () => {
    expect(parseDecision('pause', { who: 'w'.repeat(200), why: 'y'.repeat(2_000) }).ok).toBe(true);
    expect(parseDecision('pause', { who: 'w'.repeat(201), why: 'y' })).toEqual({
      ok: false,
      message: 'pause: who: at most 200 characters',
    });
    expect(parseDecision('pause', { who: 'w', why: 'y'.repeat(2_001) })).toEqual({
      ok: false,
      message: 'pause: why: at most 2000 characters',
    });
  });

  test('explicit resume: concurrency 1-10000, revisit multiplier 1-100', () => {
    const resume = (concurrency: number, revisitMultiplier: number) =>
      parseDecision('resume', { who: 'w', why: 'y', mode: 'explicit', concurrency, revisitMultiplier });
    expect(resume(10_000, 100).ok).toBe(true);
    expect(resume(10_001, 1)).toEqual({ ok: false, message: 'resume: concurrency: expected a whole number 1-10000' });
    expect(resume(1, 100.5)).toEqual({
      ok: false,
      message: 'resume: revisitMultiplier: expected a number 1-100 (1 = usual revisit intervals)',
    });
  });
});

describe('canary definitions', () => {
  test(`at most ${MAX_EXPECTATIONS} checks`, () => {
    const checks = (n: number) => [
      { status: 200 },
      ...Array.from({ length: n - 1 }, (_, i) => ({ absent: `marker ${i}` })),
    ];
    expect(define({ expect: checks(MAX_EXPECTATIONS) }).ok).toBe(true);
    expect(define({ expect: checks(MAX_EXPECTATIONS + 1) })).toEqual({
      ok: false,
      errors: [`expect: has more than ${MAX_EXPECTATIONS} checks; split the page into several canaries`],
    });
  });

  test('a page timeout between 100 ms and 2 min', () => {
    expect(TIMEOUT_LIMITS).toEqual({ minMs: 100, maxMs: 120_000 });
    expect(define({ timeout: '2m' }).ok).toBe(true);
    expect(define({ timeout: '121s' })).toEqual({
      ok: false,
      errors: ['timeout: must be between 100ms and 2m (got "121s")'],
    });
  });

  test(`a config file holds at most ${MAX_CANARIES_PER_FILE} canaries`, () => {
    const entries = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        site: 'shop.example.com',
        name: `c${i}`,
        url: 'https://shop.example.com/p/1',
        expect: [{ status: 200 }],
      }));
    expect(parseCanaryFile({ canaries: entries(MAX_CANARIES_PER_FILE) }, { selectorProblem }).ok).toBe(true);
    const refused = parseCanaryFile({ canaries: entries(MAX_CANARIES_PER_FILE + 1) }, { selectorProblem });
    expect(refused).toEqual({
      ok: false,
      errors: [`canaries: has more than ${MAX_CANARIES_PER_FILE} canaries; split the file`],
    });
  });
});
