/**
 * What a canary expects of its page. Written by people in JSON (the "wire" form, e.g.
 * `{"css": ".price", "equals": "$139.95"}`), parsed into a discriminated form the checker can switch on.
 * Every entry is one target (status, css, json or absent) and, for css/json, exactly one assertion:
 * one check per entry keeps each failure message about one thing.
 */
import { z } from 'zod';
import { describeValue, expecting, issueLines } from '@target-health/crawler/events/zod-issues';
import type { SelectorCheck } from './html-document';
import { type JsonValue, pointerProblem } from './json-pointer';
import { patternProblem } from './pattern';

export type Assertion =
  | { op: 'equals'; value: JsonValue }
  | { op: 'matches'; pattern: string }
  | { op: 'between'; min: number; max: number }
  | { op: 'count'; n: number }
  | { op: 'atLeast'; n: number };

export type Expectation =
  | { kind: 'status'; statuses: number[] }
  | { kind: 'css'; selector: string; attr?: string; assert: Assertion }
  | { kind: 'json'; pointer: string; assert: Assertion }
  | { kind: 'absent'; text: string };

/** The JSON form people write (and the form stored in PostgreSQL). */
export type ExpectationJson = Record<string, JsonValue>;

export const EXPECTATION_TARGETS = ['status', 'css', 'json', 'absent'] as const;
export const ASSERTION_OPS = ['equals', 'matches', 'between', 'count', 'atLeast'] as const;

export const EXPECTATION_EXAMPLE = '{"css": ".price", "equals": "$139.95"}';
const TEXT_LIMIT = 500;

const statusCode = z
  .number(expecting('an HTTP status code (an integer 100-999)'))
  .int(expecting('an HTTP status code (an integer 100-999)'))
  .min(100, expecting('an HTTP status code (an integer 100-999)'))
  .max(999, expecting('an HTTP status code (an integer 100-999)'));

const text = (what: string) =>
  z
    .string(expecting(what))
    .min(1, expecting(`a non-empty ${what}`))
    .max(TEXT_LIMIT, expecting(`${what} of at most ${TEXT_LIMIT} characters`));

const count = (what: string) =>
  z.number(expecting(what)).int(expecting(what)).min(0, expecting(what)).max(1_000_000, expecting(what));

const assertionFields = {
  matches: text('a regular expression').optional(),
  between: z
    .tuple(
      [z.number(expecting('a number')), z.number(expecting('a number'))],
      expecting('a range [min, max] like [100, 200]'),
    )
    .optional(),
  count: count('a number of matches (an integer ≥ 0)').optional(),
  atLeast: count('a minimum number of matches (an integer ≥ 0)').optional(),
};

const VARIANTS = {
  status: z.strictObject({
    status: z.union(
      [statusCode, z.array(statusCode).min(1).max(20)],
      expecting('a status code like 200, or a list like [200, 203]'),
    ),
  }),
  css: z.strictObject({
    css: text('CSS selector'),
    attr: z
      .string(expecting('an attribute name like "content"'))
      .regex(/^[A-Za-z_:][-A-Za-z0-9_:.]{0,99}$/, expecting('an attribute name like "content"'))
      .optional(),
    equals: z.union([z.string(), z.number()], expecting('the expected text (a string)')).optional(),
    ...assertionFields,
  }),
  json: z.strictObject({
    json: z.string(expecting('a JSON pointer like "/items/0/price"')).max(TEXT_LIMIT),
    equals: z.json(expecting('the expected JSON value')).optional(),
    ...assertionFields,
  }),
  absent: z.strictObject({ absent: text('text that must not appear on the page') }),
} as const;

export type ExpectationParse = { ok: true; expectation: Expectation } | { ok: false; errors: string[] };

/** The checks that need an engine: run when a canary is defined, skipped when a stored row is read back. */
export interface ExpectationChecks {
  /**
   * Compiles a CSS selector with the engine that evaluates it (server/canary-runner/html.ts); undefined: not checked.
   */
  selectorProblem: SelectorCheck | undefined;
  /** Compile `matches` patterns on the linear-time engine (core/canaries/pattern.ts). */
  patterns: boolean;
}

/** Parses one wire entry; errors are `path.field: message` lines (`path` like "expect[2]"). */
export function parseExpectation(raw: unknown, path: string, checks: ExpectationChecks): ExpectationParse {
  const fail = (...errors: string[]): ExpectationParse => ({ ok: false, errors });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail(`${path}: must be an object like ${EXPECTATION_EXAMPLE}`);
  }
  const targets = EXPECTATION_TARGETS.filter((t) => t in raw);
  if (targets.length === 0) {
    return fail(
      `${path}: must have one of ${EXPECTATION_TARGETS.join(', ')} (e.g. ${EXPECTATION_EXAMPLE}); got ` +
        `${fieldList(Object.keys(raw))}`,
    );
  }
  if (targets.length > 1) return fail(`${path}: has both ${targets.join(' and ')}; write one check per entry`);
  const target = targets[0]!;
  const schema = VARIANTS[target];
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const known = Object.keys(schema.shape);
    return fail(
      ...issueLines(parsed.error.issues, { root: '', knownKeys: (p) => (p === '' ? known : undefined) }).map((m) =>
        at(path, m),
      ),
    );
  }

  switch (target) {
    case 'status': {
      const value = (parsed.data as z.output<typeof VARIANTS.status>).status;
      return { ok: true, expectation: { kind: 'status', statuses: Array.isArray(value) ? value : [value] } };
    }
    case 'absent':
      return {
        ok: true,
        expectation: { kind: 'absent', text: (parsed.data as z.output<typeof VARIANTS.absent>).absent },
      };
    case 'css': {
      const data = parsed.data as z.output<typeof VARIANTS.css>;
      const errors: string[] = [];
      const problem = checks.selectorProblem?.(data.css);
      if (problem !== undefined) {
        errors.push(
          `${path}.css: ${describeValue(data.css)} is not a valid CSS selector (${problem}); fix the selector, ` +
            `e.g. ".price" or "span[itemprop=price]"`,
        );
      }
      const assert = assertionOf(data, path, errors, checks);
      if (assert && data.attr !== undefined && (assert.op === 'count' || assert.op === 'atLeast')) {
        errors.push(`${path}.attr: counts elements, so an attribute makes no sense with ${assert.op}; remove attr`);
      }
      if (errors.length > 0 || !assert) return fail(...errors);
      const expectation: Expectation = { kind: 'css', selector: data.css, assert };
      if (data.attr !== undefined) expectation.attr = data.attr;
      return { ok: true, expectation };
    }
    case 'json': {
      const data = parsed.data as z.output<typeof VARIANTS.json>;
      const errors: string[] = [];
      const problem = pointerProblem(data.json);
      if (problem !== undefined)
        errors.push(
          `${path}.json: ${describeValue(data.json)} is not a JSON pointer: it ${problem}; e.g. "/items/0/price"`,
        );
      const assert = assertionOf(data, path, errors, checks);
      if (errors.length > 0 || !assert) return fail(...errors);
      return { ok: true, expectation: { kind: 'json', pointer: data.json, assert } };
    }
  }
}

type AssertionFields = {
  equals?: JsonValue | undefined;
  matches?: string | undefined;
  between?: [number, number] | undefined;
  count?: number | undefined;
  atLeast?: number | undefined;
};

function assertionOf(
  data: AssertionFields,
  path: string,
  errors: string[],
  checks: ExpectationChecks,
): Assertion | undefined {
  const present = ASSERTION_OPS.filter((op) => data[op] !== undefined);
  if (present.length !== 1) {
    errors.push(
      present.length === 0
        ? `${path}: say what to check with exactly one of ${ASSERTION_OPS.join(', ')} (e.g. ${EXPECTATION_EXAMPLE})`
        : `${path}: has ${present.join(' and ')}; use exactly one of them per entry (add another entry for ` +
            `another check)`,
    );
    return undefined;
  }
  const op = present[0]!;
  switch (op) {
    case 'equals':
      return { op, value: data.equals as JsonValue };
    case 'matches': {
      const pattern = data.matches!;
      const problem = checks.patterns ? patternProblem(pattern, `${path}.matches`) : undefined;
      if (problem !== undefined) {
        errors.push(problem);
        return undefined;
      }
      return { op, pattern };
    }
    case 'between': {
      const [min, max] = data.between!;
      if (min > max) {
        errors.push(`${path}.between: min ${min} is above max ${max}; write [min, max]`);
        return undefined;
      }
      return { op, min, max };
    }
    case 'count':
      return { op, n: data.count! };
    case 'atLeast':
      return { op, n: data.atLeast! };
  }
}

/** The fields someone wrote, quoted and capped (a key may be anything JSON allows). */
function fieldList(keys: readonly string[]): string {
  if (keys.length === 0) return 'fields none';
  const named = keys
    .slice(0, 5)
    .map((k) => (/^[\w$-]{1,40}$/.test(k) ? k : describeValue(k)))
    .join(', ');
  return `fields ${named}${keys.length > 5 ? ` and ${keys.length - 5} more` : ''}`;
}

/** Joins a base path and a `field: message` line from issueLines. */
function at(base: string, message: string): string {
  if (message.startsWith(': ')) return `${base}${message}`;
  return message.startsWith('[') ? `${base}${message}` : `${base}.${message}`;
}

/** Back to the JSON form (stored, listed, and accepted again by {@link parseExpectation}). */
export function expectationToJson(e: Expectation): ExpectationJson {
  switch (e.kind) {
    case 'status':
      return { status: e.statuses.length === 1 ? e.statuses[0]! : e.statuses };
    case 'absent':
      return { absent: e.text };
    case 'css':
      return { css: e.selector, ...(e.attr !== undefined ? { attr: e.attr } : {}), ...assertionToJson(e.assert) };
    case 'json':
      return { json: e.pointer, ...assertionToJson(e.assert) };
  }
}

function assertionToJson(a: Assertion): ExpectationJson {
  switch (a.op) {
    case 'equals':
      return { equals: a.value };
    case 'matches':
      return { matches: a.pattern };
    case 'between':
      return { between: [a.min, a.max] };
    case 'count':
      return { count: a.n };
    case 'atLeast':
      return { atLeast: a.n };
  }
}

/** One line for people: `.price text equals "$139.95"`, `/items count ≥ 3`, `status 200`. */
export function describeExpectation(e: Expectation): string {
  switch (e.kind) {
    case 'status':
      return `status ${e.statuses.join(' or ')}`;
    case 'absent':
      return `${JSON.stringify(e.text)} absent`;
    case 'css':
      if (e.assert.op === 'count' || e.assert.op === 'atLeast') return `${e.selector} ${describeAssertion(e.assert)}`;
      return `${e.selector} ${e.attr === undefined ? 'text' : `[${e.attr}]`} ${describeAssertion(e.assert)}`;
    case 'json':
      return `${e.pointer || '(document)'} ${describeAssertion(e.assert)}`;
  }
}

function describeAssertion(a: Assertion): string {
  switch (a.op) {
    case 'equals':
      return `equals ${JSON.stringify(a.value)}`;
    case 'matches':
      return `matches /${a.pattern}/`;
    case 'between':
      return `is a number in [${a.min}, ${a.max}]`;
    case 'count':
      return `count = ${a.n}`;
    case 'atLeast':
      return `count ≥ ${a.n}`;
  }
}
