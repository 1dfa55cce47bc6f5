/**
 * Checks a fetched page against a canary's expectations. Each check reports what was expected and what
 * was there, in a form short enough for a notification: the person deciding whether to resume a site
 * reads "expected "$139.95", got "$119.95"", not a diff of two HTML pages. Everything shown is cut on
 * code-point boundaries (an emoji is never halved into a string PostgreSQL refuses), and `matches`
 * patterns run on the linear-time engine (core/canaries/pattern.ts). The HTML engine is passed in
 * (server/canary-runner/html.ts), so this module stays pure.
 */
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { describeExpectation, type Assertion, type Expectation } from './expectation';
import { collapse, type HtmlDocument, type HtmlParser } from './html-document';
import { type JsonValue, resolvePointer } from './json-pointer';
import { parseDisplayedNumber } from './numbers';
import { compilePattern } from './pattern';

export interface CheckedExpectation {
  /** `describeExpectation` of the check. */
  check: string;
  ok: boolean;
  expected: string;
  actual: string;
  /** A short piece of the page around what was checked (the element's HTML, the text around a marker). */
  excerpt?: string;
}

export interface CheckablePage {
  status: number;
  body: string;
}

const SHOWN = 120;
const EXCERPT = 240;
/** User regexes run on at most this much text (bounded work even for a careless pattern). */
const MATCH_INPUT = 2_000;

export const show = (value: string | undefined): string => {
  if (value === undefined) return '(nothing)';
  return cutText(JSON.stringify(value), SHOWN, '…"');
};
const cut = (text: string, limit = EXCERPT): string => cutText(wellFormed(text), limit);

/** The status check: the explicit one, else any 2xx (a canary page that redirects or errors is not the page). */
export function checkStatus(expect: readonly Expectation[], status: number): CheckedExpectation {
  const explicit = expect.find((e): e is Extract<Expectation, { kind: 'status' }> => e.kind === 'status');
  if (explicit) {
    return {
      check: describeExpectation(explicit),
      ok: explicit.statuses.includes(status),
      expected: explicit.statuses.join(' or '),
      actual: String(status),
    };
  }
  return { check: 'status 2xx', ok: status >= 200 && status < 300, expected: '2xx', actual: String(status) };
}

/** Every content check (everything but status), in definition order; `parseHtml` parses the page for CSS checks. */
export function checkContent(
  expect: readonly Expectation[],
  page: CheckablePage,
  parseHtml: HtmlParser,
): CheckedExpectation[] {
  let html: HtmlDocument | undefined;
  let json: { value: JsonValue } | { error: string } | undefined;
  const document = () => (html ??= parseHtml(page.body));
  const jsonDocument = () => (json ??= parseJson(page.body));
  const results: CheckedExpectation[] = [];
  for (const e of expect) {
    switch (e.kind) {
      case 'status':
        break;
      case 'absent':
        results.push(checkAbsent(e.text, page.body));
        break;
      case 'css':
        results.push(checkCss(e, document()));
        break;
      case 'json':
        results.push(checkJson(e, jsonDocument()));
        break;
    }
  }
  return results;
}

function checkAbsent(text: string, body: string): CheckedExpectation {
  const at = body.toLowerCase().indexOf(text.toLowerCase());
  const base = { check: describeExpectation({ kind: 'absent', text }), expected: 'absent' };
  if (at < 0) return { ...base, ok: true, actual: 'absent' };
  const excerpt = collapse(aroundMatch(body, at, text.length, 80));
  return { ...base, ok: false, actual: `present at character ${at}`, excerpt: cut(excerpt) };
}

function checkCss(e: Extract<Expectation, { kind: 'css' }>, doc: HtmlDocument): CheckedExpectation {
  const check = describeExpectation(e);
  const a = e.assert;
  if (a.op === 'count' || a.op === 'atLeast') {
    const n = doc.count(e.selector);
    const ok = a.op === 'count' ? n === a.n : n >= a.n;
    return {
      check,
      ok,
      expected: a.op === 'count' ? `${a.n} matches` : `at least ${a.n} matches`,
      actual: `${n} matches`,
    };
  }
  const first = doc.first(e.selector, e.attr);
  if (first === undefined)
    return { check, ok: false, expected: expectedText(a), actual: `no element matches ${e.selector}` };
  if (first.value === undefined) {
    return {
      check,
      ok: false,
      expected: expectedText(a),
      actual: `the element has no ${e.attr} attribute`,
      excerpt: cut(first.html),
    };
  }
  const result = assertText(a, first.value);
  return { check, ...result, excerpt: cut(first.html) };
}

function checkJson(
  e: Extract<Expectation, { kind: 'json' }>,
  doc: { value: JsonValue } | { error: string },
): CheckedExpectation {
  const check = describeExpectation(e);
  const a = e.assert;
  if ('error' in doc)
    return { check, ok: false, expected: expectedText(a), actual: `the body is not JSON (${doc.error})` };
  const found = resolvePointer(doc.value, e.pointer);
  if (!found.found) return { check, ok: false, expected: expectedText(a), actual: `nothing at ${found.missing}` };
  const value = found.value;
  const shownValue = cut(JSON.stringify(value), SHOWN);
  switch (a.op) {
    case 'equals':
      return {
        check,
        ok: canonical(value) === canonical(a.value),
        expected: JSON.stringify(a.value),
        actual: shownValue,
      };
    case 'count':
    case 'atLeast': {
      const n = Array.isArray(value)
        ? value.length
        : value !== null && typeof value === 'object'
          ? Object.keys(value).length
          : undefined;
      if (n === undefined) return { check, ok: false, expected: expectedText(a), actual: `${shownValue} (not a list)` };
      return { check, ok: a.op === 'count' ? n === a.n : n >= a.n, expected: expectedText(a), actual: `${n} items` };
    }
    case 'matches':
    case 'between': {
      if (typeof value !== 'string' && typeof value !== 'number')
        return { check, ok: false, expected: expectedText(a), actual: `${shownValue} (not a string or number)` };
      return { check, ...assertText(a, String(value)) };
    }
  }
}

function assertText(a: Assertion, value: string): Pick<CheckedExpectation, 'ok' | 'expected' | 'actual'> {
  switch (a.op) {
    case 'equals':
      return {
        ok: collapse(value) === collapse(textOf(a.value)),
        expected: show(textOf(a.value)),
        actual: show(value),
      };
    case 'matches': {
      const compiled = compilePattern(a.pattern);
      // Definitions are checked when written; a stored pattern the engine refuses fails this check, saying why.
      if (!compiled.ok)
        return { ok: false, expected: `/${a.pattern}/`, actual: `the pattern cannot run (${compiled.problem})` };
      return {
        ok: compiled.pattern.test(cutText(value, MATCH_INPUT, '')),
        expected: `/${a.pattern}/`,
        actual: show(value),
      };
    }
    case 'between': {
      const n = parseDisplayedNumber(value);
      return {
        ok: n !== undefined && n >= a.min && n <= a.max,
        expected: `a number in [${a.min}, ${a.max}]`,
        actual: n === undefined ? `${show(value)} (no number)` : `${show(value)} (${n})`,
      };
    }
    case 'count':
    case 'atLeast':
      // Counts are handled by the callers (they count elements or items, not text).
      return { ok: false, expected: expectedText(a), actual: show(value) };
  }
}

/**
 * `body` from `margin` characters before `at` to `margin` after the match, not splitting a surrogate pair at either
 * end.
 */
function aroundMatch(body: string, at: number, length: number, margin: number): string {
  let start = Math.max(0, at - margin);
  if (start > 0 && isLowSurrogate(body.charCodeAt(start))) start -= 1;
  return cutText(body.slice(start), at - start + length + margin, '');
}

const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** CSS `equals` values are strings or numbers (the schema says so); numbers compare as written. */
const textOf = (value: JsonValue): string => (typeof value === 'string' ? value : JSON.stringify(value));

function expectedText(a: Assertion): string {
  switch (a.op) {
    case 'equals':
      return typeof a.value === 'string' ? show(a.value) : JSON.stringify(a.value);
    case 'matches':
      return `/${a.pattern}/`;
    case 'between':
      return `a number in [${a.min}, ${a.max}]`;
    case 'count':
      return `${a.n} items`;
    case 'atLeast':
      return `at least ${a.n} items`;
  }
}

function parseJson(body: string): { value: JsonValue } | { error: string } {
  try {
    return { value: JSON.parse(body) as JsonValue };
  } catch (err) {
    return { error: err instanceof Error ? cut(err.message, 80) : 'invalid' };
  }
}

/** JSON with sorted keys, so {"a":1,"b":2} equals {"b":2,"a":1}. */
function canonical(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k] as JsonValue)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
