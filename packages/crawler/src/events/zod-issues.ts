/**
 * The one formatter of zod failures, shared by every layer (event lines, canary definitions, scoring
 * windows and configuration, workflow payloads, the environment): each problem becomes a one-line
 * `field: what is wrong`, with the field path as it appears in the JSON (`routes[0].requests`).
 *
 * Everything it echoes from the input — unknown keys, odd field names, values — is capped at
 * MAX_ECHO_CHARS and cut on a code-point boundary (well-formed.ts: no NUL, no lone surrogate); a
 * joined message is at most MAX_MESSAGE_CHARS. A refusal must stay small whatever was sent: refused
 * payloads are kept in workflow state and logs, and one that echoed a 1.5 MB key once wedged a loop.
 */
import type * as z from '../zod';
import { cutText, wellFormed } from './well-formed';

/** Longest echo of one piece of input (a key, a value), in UTF-16 code units, ellipsis included. */
export const MAX_ECHO_CHARS = 80;
/** Longest line for one problem. */
export const MAX_LINE_CHARS = 300;
/** Longest joined message (formatIssues). */
export const MAX_MESSAGE_CHARS = 500;
/** Unknown keys named one by one; beyond this many the rest are counted. */
export const MAX_KEYS_NAMED = 5;

const ELLIPSIS = '…';

type Issue = z.core.$ZodIssue;
type Issues = z.ZodError | readonly Issue[];

export interface IssueFormatOptions {
  /** Prepended to every path (`baseline` → `baseline.hardBlocks`); also names the whole value. */
  prefix?: string;
  /**
   * Names the whole value when an issue has no path and there is no prefix (`event: must be an object`).
   * Without either, such a line is the bare message.
   */
  root?: string;
  /**
   * Known field names of the object at a path ('' for the root), for "did you mean". Giving it switches
   * unknown keys to one line per key with a hint (`statusCode: unknown field; did you mean "status"?`);
   * without it they are named in one line (`unknown field "reason"`).
   */
  knownKeys?: (path: string) => readonly string[] | undefined;
  /** Common wrong names mapped to the right one, e.g. timestamp → ts. */
  aliases?: Readonly<Record<string, string>>;
  /** Extra detail appended to a line as ` (detail)`, e.g. the environment variable's value. */
  detail?: (issue: Issue) => string | undefined;
}

/**
 * `text` in at most `max` UTF-16 code units, well-formed (no NUL, no lone surrogate), cut on a
 * code-point boundary with an ellipsis when it was longer.
 */
export function capText(text: string, max: number = MAX_ECHO_CHARS): string {
  // Only the head can survive: cleaning a megabyte to keep 80 characters would be waste.
  return cutText(wellFormed(text.length > max ? text.slice(0, max + 1) : text), max, ELLIPSIS);
}

// C0 controls, DEL, C1 controls and the Unicode line and paragraph separators. JSON.stringify escapes
// only C0, and a custom message may quote input unquoted: any of these raw would break a message over
// lines (U+2028, NEL) or into a terminal escape sequence, so lines carry them as \uXXXX escapes.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex
const HAS_RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** `text` as one line: raw control characters and line separators written as `\uXXXX` escapes. */
export function oneLine(text: string): string {
  return HAS_RAW_CONTROL.test(text)
    ? text.replace(RAW_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : text;
}

/** A message as one line ({@link oneLine}), well formed, at most `max` characters (cut with an ellipsis). */
export function messageLine(text: string, max: number = MAX_LINE_CHARS): string {
  return capText(oneLine(text.length > max ? text.slice(0, max + 1) : text), max);
}
const lineOf = (text: string): string => messageLine(text);

/**
 * A short, safe rendering of a bad value for an error message (strings quoted, capped to `maxChars` and on one line).
 */
export function describeValue(value: unknown, maxChars = 60): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return oneLine(JSON.stringify(capText(value, maxChars)));
  // Past 2^53 − 1 JSON.parse has already rounded the number: echoing it would show a value never sent.
  if (typeof value === 'number' && Math.abs(value) > Number.MAX_SAFE_INTEGER)
    return Number.isFinite(value)
      ? 'a number beyond 2^53 − 1, which JSON numbers do not hold exactly'
      : 'a number too large for JSON numbers';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Builds a zod `error` option that says what the field must be and what arrived instead. Used on the
 * type and on each check of a field so every failure of that field reads the same way.
 */
export function expecting(what: string): { error: (issue: { input?: unknown }) => string } {
  return {
    error: (issue) =>
      issue.input === undefined ? `is required: ${what}` : `must be ${what} (got ${describeValue(issue.input)})`,
  };
}

/** Field names as typed; odd ones (empty, spaces, dots, long) quoted and capped so the message stays unambiguous. */
function fieldName(name: string): string {
  return /^[A-Za-z0-9_$-]{1,80}$/.test(name) ? name : JSON.stringify(capText(name));
}

/** `['extraction', 'missingFields', 0]` → `extraction.missingFields[0]`. */
export function formatPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? fieldName(String(part)) : `.${fieldName(String(part))}`;
  }
  return out;
}

const quoted = (key: string): string => JSON.stringify(capText(key));

function keyList(keys: readonly string[]): string {
  const named = keys.slice(0, MAX_KEYS_NAMED).map(quoted).join(', ');
  return keys.length > MAX_KEYS_NAMED ? `${named} and ${keys.length - MAX_KEYS_NAMED} more` : named;
}

function unknownKeyLines(
  issue: Extract<Issue, { code: 'unrecognized_keys' }>,
  path: string,
  options: IssueFormatOptions,
): string[] {
  if (options.knownKeys === undefined) {
    const message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${keyList(issue.keys)}`;
    return [path === '' ? message : `${path}: ${message}`];
  }
  const known = options.knownKeys(path) ?? [];
  const lines = issue.keys.slice(0, MAX_KEYS_NAMED).map((key) => {
    const field = path === '' ? fieldName(key) : `${path}.${fieldName(key)}`;
    const guess = suggest(key, known, options.aliases ?? {});
    const hint = guess
      ? `did you mean "${guess}"?`
      : known.length > 0
        ? `known fields: ${known.join(', ')}`
        : 'remove it';
    return `${field}: unknown field; ${hint}`;
  });
  if (issue.keys.length > MAX_KEYS_NAMED)
    lines.push(
      `${path === '' ? (options.root ?? 'value') : path}: ${issue.keys.length - MAX_KEYS_NAMED} more unknown fields`,
    );
  return lines;
}

/** One line per problem (`field: message`), each one line ({@link oneLine}), well-formed and at most MAX_LINE_CHARS. */
export function issueLines(issues: Issues, options: IssueFormatOptions = {}): string[] {
  const list = Array.isArray(issues) ? (issues as readonly Issue[]) : (issues as z.ZodError).issues;
  const lines: string[] = [];
  for (const issue of list) {
    const path = formatPath(issue.path, options.prefix ?? '');
    if (issue.code === 'unrecognized_keys') {
      lines.push(...unknownKeyLines(issue, path, options).map(lineOf));
      continue;
    }
    // A bad record key: the key schema's own message says what a key must look like.
    const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
    const detail = options.detail?.(issue);
    const text = detail === undefined ? message : `${message} (${detail})`;
    const name = path !== '' ? path : options.root;
    lines.push(lineOf(name === undefined ? text : `${name}: ${text}`));
  }
  return lines;
}

/** All problems in one line, `; `-separated, at most MAX_MESSAGE_CHARS (later problems are then counted). */
export function formatIssues(issues: Issues, options: IssueFormatOptions = {}): string {
  const lines = issueLines(issues, options);
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const next = out === '' ? line : `${out}; ${line}`;
    const more = `; and ${lines.length - i} more problem${lines.length - i > 1 ? 's' : ''}`;
    // Keep room for the "and N more" tail unless this is the last line.
    if (next.length > MAX_MESSAGE_CHARS - (i === lines.length - 1 ? 0 : more.length)) {
      return out === '' ? capText(line, MAX_MESSAGE_CHARS) : `${out}${more}`;
    }
    out = next;
  }
  return out;
}

function suggest(key: string, known: readonly string[], aliases: Readonly<Record<string, string>>): string | undefined {
  if (key.length > 64) return undefined; // nothing we know is that long; spare the edit distance
  const alias = aliases[key] ?? aliases[key.toLowerCase()];
  if (alias !== undefined && known.includes(alias)) return alias;
  const camel = key.replace(/[_-]([a-z])/g, (_m, c: string) => c.toUpperCase());
  const lower = key.toLowerCase();
  const direct = known.find((k) => k === camel || k.toLowerCase() === lower || k.toLowerCase() === camel.toLowerCase());
  if (direct !== undefined) return direct;
  const prefix = known.find((k) => k.toLowerCase().startsWith(lower) || lower.startsWith(k.toLowerCase()));
  if (prefix !== undefined && Math.min(prefix.length, key.length) >= 3) return prefix;
  // Edit distance only for names long enough that 2 edits do not turn anything into anything.
  if (key.length < 4) return undefined;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
