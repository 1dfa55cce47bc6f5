/**
 * The request-outcome event: one line per request a crawler made, the raw material of every signal
 * (see docs/events.md). The schema is strict (unknown fields are errors with a "did you mean") because
 * a misspelt field silently dropped is a signal silently lost.
 *
 * Normalisations done while parsing, so every consumer sees one form:
 * - `ts` → epoch milliseconds (number): JSON- and Temporal-payload-safe, cheap to compare and bucket.
 * - `site` → normalised host (see site.ts); it is the workflow key.
 * - `route` → always an object; `route.country` upper-case.
 * - `headers` → lower-case names, repeated headers joined with "\n"; any name, `__proto__` and
 *   `constructor` included, is kept as given (the object has no prototype).
 * - `bodySample` → at most {@link BODY_SAMPLE_CHARS} characters: a longer page keeps its head and its tail
 *   (`bodySampleOf`, all the classifier reads).
 *   Cuts fall on code-point boundaries; classification-only text (body, title, header values) is made
 *   well-formed, stored text (missingFields) and outcomeReason refuse NUL and lone surrogates (text.ts).
 * - Numbers must fit the columns and sums they end up in (see the limits below).
 *
 * Times are checked here against a fixed 2000–2100 range only (a unit mistake); the store also refuses
 * events outside its horizon around "now" (horizon.ts), which needs a clock and so is not part of
 * this pure schema.
 */
import { issueLines } from './zod-issues';
import { eventSchema, FIELD_ALIASES, NESTED_FIELDS } from './event-schema';
import type { ExtractionResult, NetworkError, Outcome } from './event-limits';

export * from './event-limits';
export { normaliseSite, tryNormaliseSite, SiteNameError } from './site';

/** Where the request went out: the proxy route (all optional; `country` upper-case once parsed). */
export interface Route {
  country?: string;
  pool?: string;
  session?: string;
}

/** What the crawler's extraction found on the page. */
export interface Extraction {
  result: ExtractionResult;
  missingFields?: string[];
  validRecords?: number;
}

/** The fields an event has the same way before and after parsing. */
interface EventFacts {
  eventId?: string;
  site: string;
  pageType?: string;
  status?: number;
  networkError?: NetworkError;
  latencyMs: number;
  bytes?: number;
  retries?: number;
  credits?: number;
  extraction?: Extraction;
  canary?: boolean;
  outcome?: Outcome;
  outcomeReason?: string;
  bodySample?: string;
  title?: string;
}

/** A parsed, normalised event (what consumers and the classifier see). */
export interface RequestOutcomeEvent extends EventFacts {
  /** Epoch milliseconds. */
  ts: number;
  /** The normalised host (see site.ts). */
  site: string;
  route: Route;
  /** Lower-case names; repeated headers joined with "\n". */
  headers?: Record<string, string>;
}

/** What a crawler sends (before normalisation). */
export interface RequestOutcomeEventInput extends EventFacts {
  /** An ISO-8601 time with a zone, or epoch milliseconds. */
  ts: string | number;
  route?: Route;
  /** Any case; a repeated header as a list. */
  headers?: Record<string, string | string[]>;
}

export type ParseEventResult = { ok: true; event: RequestOutcomeEvent } | { ok: false; errors: string[] };

/** Validates and normalises one event; errors are `field: message` strings. */
export function parseEvent(input: unknown): ParseEventResult {
  const result = eventSchema().safeParse(input);
  if (result.success) return { ok: true, event: result.data };
  return {
    ok: false,
    errors: issueLines(result.error.issues, {
      root: 'event',
      knownKeys: (path) => NESTED_FIELDS[path],
      aliases: FIELD_ALIASES,
    }),
  };
}

/**
 * Parses one NDJSON line (1-based `lineNo`); every error starts with `line N: `. Blank lines are errors
 * too: readers that tolerate a trailing newline should skip them before calling this.
 */
export function parseEventLine(line: string, lineNo: number): ParseEventResult {
  const prefix = `line ${lineNo}: `;
  if (line.trim() === '') return { ok: false, errors: [`${prefix}empty line; expected one JSON event object`] };
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return { ok: false, errors: [`${prefix}not valid JSON (${detail}); each line must be one JSON object`] };
  }
  const result = parseEvent(json);
  return result.ok ? result : { ok: false, errors: result.errors.map((e) => prefix + e) };
}
