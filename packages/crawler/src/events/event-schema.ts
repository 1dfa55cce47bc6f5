/**
 * The zod schema of the request-outcome event (the rules and normalisations are described in event.ts
 * and docs/events.md). Built on first use (`eventSchema()`, see ../lazy.ts), not at load.
 *
 * zod-typed, so not part of the public entry points' declarations (a crawler need not have zod): the
 * server reaches it by its deep path (`@target-health/crawler/events/event-schema`). The hand-written
 * types in event.ts are what users see; the checks at the end hold them equal to the schema's.
 */
import * as z from '../zod';
import { lazy } from '../lazy';
import { describeValue, expecting } from './zod-issues';
import { SITE_EXAMPLE, tryNormaliseSite } from './site';
import { bodySampleOf, classificationText, storableTextProblem } from './text';
import {
  BODY_SAMPLE_CHARS,
  EVENT_FIELDS,
  EXTRACTION_RESULTS,
  HEADER_NAME,
  MAX_BYTES,
  MAX_HEADER_NAME,
  MAX_HEADER_VALUE,
  MAX_HEADERS,
  MAX_INT32,
  MAX_LATENCY_MS,
  MAX_TITLE_CHARS,
  MAX_TS,
  MIN_TS,
  NETWORK_ERRORS,
  OUTCOMES,
  type EventField,
} from './event-limits';
import type { RequestOutcomeEvent, RequestOutcomeEventInput } from './event';

const ISO_8601 = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/i;
const TS_HELP = 'an ISO-8601 time with a zone like "2025-01-31T12:00:00.000Z", or epoch milliseconds';

/** Parses `ts` to epoch ms, or returns why not. */
function parseTimestamp(value: string | number): number | string {
  let ms: number;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `must be ${TS_HELP} (got ${describeValue(value)})`;
    if (value >= MIN_TS / 1000 && value < MAX_TS / 1000) {
      return `looks like epoch seconds (got ${value}); send epoch milliseconds (seconds × 1000)`;
    }
    ms = Math.floor(value);
  } else {
    const m = ISO_8601.exec(value.trim());
    if (!m) return `must be ${TS_HELP} (got ${describeValue(value)})`;
    const [, date = '', time = '', fraction = '', zone = ''] = m;
    // Date.parse wants at most milliseconds and a "+hh:mm" zone; normalise before handing it over.
    const millis = fraction.slice(0, 4).padEnd(fraction === '' ? 0 : 4, '0');
    const tz = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
    ms = Date.parse(`${date}T${time}${millis}${tz}`);
    // Date.parse rolls 2025-02-30 over to March; a day the month does not have is a bad timestamp.
    if (Number.isNaN(ms) || !isCalendarDate(date)) return `is not a real date/time (got ${describeValue(value)})`;
  }
  if (ms < MIN_TS || ms >= MAX_TS) {
    return `is outside 2000-01-01..2100-01-01 (got ${describeValue(value)}); ${TS_HELP}`;
  }
  return ms;
}

function isCalendarDate(ymd: string): boolean {
  const [y = NaN, m = NaN, d = NaN] = ymd.split('-').map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

export const FIELD_ALIASES: Readonly<Record<string, string>> = {
  timestamp: 'ts',
  time: 'ts',
  date: 'ts',
  host: 'site',
  domain: 'site',
  url: 'site',
  statuscode: 'status',
  status_code: 'status',
  code: 'status',
  latency: 'latencyMs',
  duration: 'latencyMs',
  durationms: 'latencyMs',
  elapsed: 'latencyMs',
  size: 'bytes',
  length: 'bytes',
  contentlength: 'bytes',
  error: 'networkError',
  body: 'bodySample',
  html: 'bodySample',
  content: 'bodySample',
  id: 'eventId',
  retry: 'retries',
  cost: 'credits',
  records: 'extraction',
  result: 'extraction',
  type: 'pageType',
  proxy: 'route',
  country: 'route',
};

export const NESTED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '': EVENT_FIELDS,
  route: ['country', 'pool', 'session'],
  extraction: ['result', 'missingFields', 'validRecords'],
};

function buildEventSchema() {
  const timestamp = z.union([z.string(), z.number()], expecting(TS_HELP)).transform((value, ctx) => {
    const parsed = parseTimestamp(value);
    if (typeof parsed === 'string') {
      ctx.issues.push({ code: 'custom', message: parsed, input: value });
      return z.NEVER;
    }
    return parsed;
  });

  const site = z.string(expecting(`a host name like ${SITE_EXAMPLE}`)).transform((value, ctx) => {
    const result = tryNormaliseSite(value);
    if (!result.ok) {
      ctx.issues.push({ code: 'custom', message: result.error.message, input: value });
      return z.NEVER;
    }
    return result.site;
  });

  /** A short identifier-like label: pool names, session patterns, page types. */
  function label(what: string, example: string) {
    const help = `${what}: 1-64 characters of letters, digits and . _ : / - (e.g. "${example}")`;
    return z.string(expecting(help)).regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/, expecting(help));
  }

  const COUNTRY_HELP = 'an ISO 3166-1 alpha-2 country code like "DE"';
  const route = z
    .strictObject(
      {
        country: z
          .string(expecting(COUNTRY_HELP))
          .regex(/^[A-Za-z]{2}$/, expecting(COUNTRY_HELP))
          .transform((c) => c.toUpperCase())
          .optional(),
        pool: label('a proxy pool name', 'residential-eu').optional(),
        session: label('a session pattern', 'sticky-10m').optional(),
      },
      expecting('an object like {"country": "DE", "pool": "residential", "session": "sticky"} (all optional)'),
    )
    .default({});

  /**
   * 1000000000000 → "1,000,000,000,000", as toLocaleString('en') writes it. Not toLocaleString itself: its
   * first call loads ICU's locale data (~20 ms), at module load, in every crawler.
   */
  function thousands(n: number): string {
    return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
  }

  // Range first, and alone: a number too large is one error saying the bound, not also "not an integer"
  // (past 2^53 − 1 every number fails zod's integer check).
  const count = (what: string, max: number) =>
    z
      .number(expecting(what))
      .min(0, { ...expecting(what), abort: true })
      .max(max, { ...expecting(`${what.replace(/ \(an integer ≥ 0\)$/, '')}, at most ${thousands(max)}`), abort: true })
      .int(expecting(what));

  /** A refinement refusing text PostgreSQL cannot store (NUL, lone surrogates), naming the culprit. */
  const storable = (what: string) =>
    [
      (s: string) => storableTextProblem(s) === undefined,
      {
        error: (issue: { input?: unknown }) =>
          `must be ${what} without ${storableTextProblem(String(issue.input)) ?? 'unstorable characters'}`,
      },
    ] as const;

  const extraction = z
    .strictObject(
      {
        result: z.enum(EXTRACTION_RESULTS, expecting(`one of ${EXTRACTION_RESULTS.join(', ')}`)),
        missingFields: z
          .array(
            z
              .string(expecting('a field name'))
              .min(1, expecting('a non-empty field name'))
              .max(128, expecting('a field name of at most 128 characters'))
              // Stored as text[]: refuse the line here rather than fail its whole batch later.
              .refine(...storable('a field name')),
            expecting('a list of the required field names that were missing, like ["price"]'),
          )
          .max(100, expecting('a list of at most 100 field names'))
          .optional(),
        validRecords: count('the number of valid records extracted (an integer ≥ 0)', MAX_INT32).optional(),
      },
      expecting('an object like {"result": "ok", "validRecords": 12}'),
    )
    .superRefine((value, ctx) => {
      if (
        value.result !== 'missing_fields' &&
        value.result !== 'schema_mismatch' &&
        (value.missingFields?.length ?? 0) > 0
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['missingFields'],
          message: `lists fields but result is "${value.result}"; use result "missing_fields"`,
        });
      }
      if (value.result === 'empty' && (value.validRecords ?? 0) > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['validRecords'],
          message: `is ${value.validRecords} but result is "empty"; an empty extraction has 0 valid records`,
        });
      }
    });

  const HEADERS_HELP = 'an object of response headers like {"server": "cloudflare", "cf-mitigated": "challenge"}';
  const HEADER_VALUE_HELP = 'a header value (a string or a list of strings)';
  /**
   * Response headers, validated by hand rather than with `z.record`: a record writes each key into a
   * plain object, where `__proto__` sets the prototype (the header vanishes) and `constructor` reads
   * `Object` back. Names are kept as given (lower-cased) in an object without a prototype.
   */
  const headers = z
    .custom<Record<string, string | string[]>>(() => true)
    .transform((raw: unknown, ctx) => {
      const problem = (message: string, path: PropertyKey[] = []) => {
        ctx.issues.push({ code: 'custom', message, input: raw, path });
        return z.NEVER;
      };
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
        return problem(`must be ${HEADERS_HELP} (got ${describeValue(raw)})`);
      const names = Object.keys(raw);
      if (names.length > MAX_HEADERS) return problem(`has ${names.length} headers; send at most ${MAX_HEADERS}`);
      const out = Object.create(null) as Record<string, string>;
      let failed = false;
      for (const name of names) {
        // An own property, even "__proto__" (JSON.parse makes it one): reading it never reaches the prototype.
        const value: unknown = (raw as Record<string, unknown>)[name];
        const key = name.trim().toLowerCase();
        if (key.length > MAX_HEADER_NAME || !HEADER_NAME.test(key)) {
          problem(`is not a header name: use 1-${MAX_HEADER_NAME} visible ASCII characters without spaces`, [name]);
          failed = true;
          continue;
        }
        const isList = Array.isArray(value) && value.every((v) => typeof v === 'string');
        if (typeof value !== 'string' && !isList) {
          problem(`must be ${HEADER_VALUE_HELP} (got ${describeValue(value)})`, [name]);
          failed = true;
          continue;
        }
        const joined = classificationText(typeof value === 'string' ? value : value.join('\n'), MAX_HEADER_VALUE);
        out[key] = out[key] === undefined ? joined : `${out[key]}\n${joined}`;
      }
      return failed ? z.NEVER : out;
    });

  const eventShape = {
    eventId: z
      .string(expecting('an id of 1-128 printable ASCII characters, unique per event (used for idempotency)'))
      .regex(/^[\x21-\x7e]{1,128}$/, expecting('an id of 1-128 printable ASCII characters without spaces'))
      .optional(),
    ts: timestamp,
    site,
    route,
    pageType: label('a page type', 'product').optional(),
    status: z
      .number(expecting('an HTTP status code (an integer 100-999)'))
      .int(expecting('an HTTP status code (an integer 100-999)'))
      .min(100, expecting('an HTTP status code (an integer 100-999)'))
      .max(999, expecting('an HTTP status code (an integer 100-999)'))
      .optional(),
    networkError: z.enum(NETWORK_ERRORS, expecting(`one of ${NETWORK_ERRORS.join(', ')}`)).optional(),
    latencyMs: z
      .number(expecting('the request latency in milliseconds, a number ≥ 0 like 412'))
      .min(0, expecting('the request latency in milliseconds, a number ≥ 0 like 412'))
      .max(MAX_LATENCY_MS, expecting(`a latency in milliseconds of at most ${MAX_LATENCY_MS} (one day)`)),
    bytes: count('the response body size in bytes (an integer ≥ 0)', MAX_BYTES).optional(),
    retries: count('the number of retries before this outcome (an integer ≥ 0)', MAX_INT32).optional(),
    credits: z
      .number(expecting('the credits this request cost, a number ≥ 0'))
      .min(0, expecting('the credits this request cost, a number ≥ 0'))
      .max(
        Number.MAX_SAFE_INTEGER,
        expecting(`a number of credits of at most ${thousands(Number.MAX_SAFE_INTEGER)} (2^53 − 1)`),
      )
      .optional(),
    extraction: extraction.optional(),
    canary: z.boolean(expecting('true or false (true for a canary fetch)')).optional(),
    outcome: z
      .enum(OUTCOMES, expecting(`one of ${OUTCOMES.join(', ')} (or leave it out and let the service classify)`))
      .optional(),
    outcomeReason: z
      .string(expecting('a short text saying why the crawler chose `outcome`'))
      .min(1, expecting('a non-empty text'))
      .max(200, expecting('a text of at most 200 characters'))
      // It becomes part of the stored reason of the classification.
      .refine(...storable('a text'))
      .optional(),
    headers: headers.optional(),
    bodySample: z
      .string(expecting('the first characters of the response body (a string)'))
      .transform((s) => bodySampleOf(s, BODY_SAMPLE_CHARS))
      .optional(),
    title: z
      .string(expecting('the page title (a string)'))
      .transform((s) => classificationText(s.trim(), MAX_TITLE_CHARS))
      .optional(),
  };

  type RawEvent = Partial<Record<'status' | 'networkError' | 'outcome' | 'outcomeReason', unknown>>;
  const isObject = (p: { value: unknown }): boolean =>
    typeof p.value === 'object' && p.value !== null && !Array.isArray(p.value);

  const schema = z
    .strictObject(eventShape, expecting('a JSON object (one request outcome)'))
    // `when` lets these run even if other fields failed, so the sender sees every problem at once.
    .refine((e: RawEvent) => !(e.status === undefined && e.networkError === undefined), {
      path: ['status'],
      message:
        'is required unless networkError is set: send status (the HTTP status code) when a response arrived, ' +
        'or networkError when none did',
      when: isObject,
    })
    .refine((e: RawEvent) => !(e.status !== undefined && e.networkError !== undefined), {
      path: ['networkError'],
      message:
        'cannot be sent together with status: a request either got an HTTP response (status) or not (networkError)',
      when: isObject,
    })
    .refine((e: RawEvent) => !(e.outcomeReason !== undefined && e.outcome === undefined), {
      path: ['outcomeReason'],
      message: 'only makes sense with outcome; add outcome or drop outcomeReason',
      when: isObject,
    });
  return schema;
}

/** The event schema (built on the first call, then the same object). */
export const eventSchema = lazy(buildEventSchema);
export type EventSchema = ReturnType<typeof buildEventSchema>;

// The hand-written types of event.ts must be the schema's own: a difference either way fails the build.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const outputIsRequestOutcomeEvent: Same<z.output<EventSchema>, RequestOutcomeEvent> = true;
const inputIsRequestOutcomeEventInput: Same<z.input<EventSchema>, RequestOutcomeEventInput> = true;
const fieldsAreEventFields: Same<keyof z.output<EventSchema>, EventField> = true;
void [outputIsRequestOutcomeEvent, inputIsRequestOutcomeEventInput, fieldsAreEventFields];
