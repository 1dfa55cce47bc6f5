/**
 * The request-outcome event's vocabulary and limits (docs/events.md): plain constants, shared by the
 * schema (event-schema.ts), the classifier, the store and the crawlers' own code.
 */

/** The classifier reads at most this many characters of a body; longer samples are cut when parsed. */
export const BODY_SAMPLE_CHARS = 64 * 1024;
/** Titles longer than this are cut. */
export const MAX_TITLE_CHARS = 1024;

export const OUTCOMES = ['ok', 'hard_block', 'challenge', 'soft_block', 'error'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const NETWORK_ERRORS = ['connection_reset', 'timeout', 'dns', 'tls', 'proxy', 'other'] as const;
export type NetworkError = (typeof NETWORK_ERRORS)[number];

export const EXTRACTION_RESULTS = ['ok', 'missing_fields', 'schema_mismatch', 'empty'] as const;
export type ExtractionResult = (typeof EXTRACTION_RESULTS)[number];

// Before 2000-01-01 or from 2100 on, a timestamp is a unit mistake, not a real request.
export const MIN_TS = Date.UTC(2000, 0, 1);
export const MAX_TS = Date.UTC(2100, 0, 1);
export const MAX_LATENCY_MS = 24 * 60 * 60 * 1000;
/** `retries` and `validRecords` are PostgreSQL `integer` columns. */
export const MAX_INT32 = 2_147_483_647;
/**
 * `bytes` (a `bigint` column) is summed per site, route and day in the rollups' 64-bit counters: at
 * 1 TB an event, 9 million events of one route and day still fit. No crawled response is that large.
 */
export const MAX_BYTES = 1_000_000_000_000;
export const MAX_HEADERS = 200;
export const MAX_HEADER_VALUE = 4096;
export const MAX_HEADER_NAME = 256;
// Visible ASCII (no controls, no spaces inside): what HTTP allows in a field name, leniently.
export const HEADER_NAME = /^[\x21-\x7e]+$/;

/** The event's fields, in the order the schema lists them (event-schema.ts holds the two equal). */
export const EVENT_FIELDS: readonly EventField[] = [
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
export type EventField =
  | 'eventId'
  | 'ts'
  | 'site'
  | 'route'
  | 'pageType'
  | 'status'
  | 'networkError'
  | 'latencyMs'
  | 'bytes'
  | 'retries'
  | 'credits'
  | 'extraction'
  | 'canary'
  | 'outcome'
  | 'outcomeReason'
  | 'headers'
  | 'bodySample'
  | 'title';
