/**
 * Turns zod issues into one-line `field: message` strings a crawler author can act on without reading
 * our code: the field path as it appears in their JSON, what was expected, what they sent, and for an
 * unknown field the name they probably meant.
 */
import { type z } from 'zod';

export interface IssueFormatOptions {
  /** Name used when the issue is about the whole value (e.g. "event" when it is not an object). */
  root: string;
  /** Known field names of the object at a dotted path ('' for the root), for "did you mean". */
  knownKeys?: (path: string) => readonly string[] | undefined;
  /** Common wrong names mapped to the right one, e.g. timestamp → ts. */
  aliases?: Readonly<Record<string, string>>;
}

/** `['extraction', 'missingFields', 0]` → `extraction.missingFields[0]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? fieldName(String(part)) : `.${fieldName(String(part))}`;
  }
  return out;
}

/** Field names as typed; odd ones (empty, spaces, dots) quoted so the message stays unambiguous. */
function fieldName(name: string): string {
  return /^[A-Za-z0-9_$-]+$/.test(name) ? name : JSON.stringify(name);
}

export function formatIssues(issues: readonly z.core.$ZodIssue[], options: IssueFormatOptions): string[] {
  const messages: string[] = [];
  for (const issue of issues) {
    const path = formatPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const known = options.knownKeys?.(path) ?? [];
      for (const key of issue.keys) {
        const field = path === '' ? fieldName(key) : `${path}.${fieldName(key)}`;
        const guess = suggest(key, known, options.aliases ?? {});
        const hint = guess
          ? `did you mean "${guess}"?`
          : known.length > 0
            ? `known fields: ${known.join(', ')}`
            : 'remove it';
        messages.push(`${field}: unknown field; ${hint}`);
      }
      continue;
    }
    // A bad record key: the key schema's own message says what a key must look like.
    const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
    messages.push(`${path === '' ? options.root : path}: ${message}`);
  }
  return messages;
}

/** A short, safe rendering of a bad value for an error message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
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

function suggest(key: string, known: readonly string[], aliases: Readonly<Record<string, string>>): string | undefined {
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
