/**
 * A fast path for parsing request-outcome events, for bulk ingestion (the store must take 100,000
 * events/s on two cores, and the zod schema alone manages about 100,000/s on one).
 *
 * It is *sound, not complete*: for any input it either returns exactly what `parseEvent` would return,
 * or `undefined`, and then the caller runs `parseEvent`, which decides and words the errors. Anything
 * unusual (header lists, time zones other than Z, fractional epochs, unknown fields...) takes the slow
 * path. Headers with string values are taken here: refusal pages and sampled bodies come with their
 * headers, and the schema's path cost those events several times what the rest of the line did.
 * test/unit/signals/fast-parse.test.ts checks the equivalence on generated valid and invalid events.
 */
import {
  BODY_SAMPLE_CHARS,
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
  type RequestOutcomeEvent,
} from './event';
import { tryNormaliseSite } from './site';
import { isWellFormed as isStorableText } from './well-formed';
import { bodySampleOf, classificationText } from './text';

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const COUNTRY = /^[A-Za-z]{2}$/;
const EVENT_ID = /^[\x21-\x7e]{1,128}$/;
const ISO_UTC = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;
const NETWORK_ERROR_SET: ReadonlySet<string> = new Set(NETWORK_ERRORS);
const OUTCOME_SET: ReadonlySet<string> = new Set(OUTCOMES);
const EXTRACTION_SET: ReadonlySet<string> = new Set(EXTRACTION_RESULTS);

/** Normalised sites by raw input: a fleet reports few distinct sites, millions of times. */
const siteCache = new Map<string, string | null>();
const SITE_CACHE_LIMIT = 10_000;
/** Longer inputs are normalised every time: caching them would let a few lines hold megabytes. */
const SITE_CACHE_MAX_KEY = 256;

function fastSite(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  if (raw.length > SITE_CACHE_MAX_KEY) {
    const r = tryNormaliseSite(raw);
    return r.ok ? r.site : undefined;
  }
  let site = siteCache.get(raw);
  if (site === undefined) {
    const r = tryNormaliseSite(raw);
    site = r.ok ? r.site : null;
    if (siteCache.size >= SITE_CACHE_LIMIT) siteCache.clear();
    siteCache.set(raw, site);
  }
  return site ?? undefined;
}

function fastTs(raw: unknown): number | undefined {
  let ms: number;
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw)) return undefined;
    ms = raw;
  } else if (typeof raw === 'string') {
    const m = ISO_UTC.exec(raw);
    if (!m) return undefined;
    ms = Date.parse(raw);
    // Date.parse rolls some impossible dates over; require the calendar date to survive the trip.
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== m[1]) return undefined;
  } else {
    return undefined;
  }
  return ms >= MIN_TS && ms < MAX_TS ? ms : undefined;
}

const isCount = (v: unknown, max: number): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max;
const isAmount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER;
const isLabel = (v: unknown): v is string => typeof v === 'string' && LABEL.test(v);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fastRoute(raw: unknown): RequestOutcomeEvent['route'] | undefined {
  if (raw === undefined) return {};
  if (!isPlainObject(raw)) return undefined;
  const route: RequestOutcomeEvent['route'] = {};
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    if (v === undefined) continue;
    if (key === 'country' && typeof v === 'string' && COUNTRY.test(v)) route.country = v.toUpperCase();
    else if (key === 'pool' && isLabel(v)) route.pool = v;
    else if (key === 'session' && isLabel(v)) route.session = v;
    else return undefined;
  }
  return route;
}

function fastExtraction(raw: unknown): RequestOutcomeEvent['extraction'] | undefined {
  if (!isPlainObject(raw)) return undefined;
  const result = raw.result;
  if (typeof result !== 'string' || !EXTRACTION_SET.has(result)) return undefined;
  const out: NonNullable<RequestOutcomeEvent['extraction']> = {
    result: result as NonNullable<RequestOutcomeEvent['extraction']>['result'],
  };
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    if (key === 'result' || v === undefined) continue;
    if (key === 'validRecords' && isCount(v, MAX_INT32)) out.validRecords = v;
    else if (
      key === 'missingFields' &&
      Array.isArray(v) &&
      v.length <= 100 &&
      v.every((f) => typeof f === 'string' && f.length >= 1 && f.length <= 128 && isStorableText(f))
    ) {
      out.missingFields = [...(v as string[])];
    } else return undefined;
  }
  if (result !== 'missing_fields' && result !== 'schema_mismatch' && (out.missingFields?.length ?? 0) > 0)
    return undefined;
  if (result === 'empty' && (out.validRecords ?? 0) > 0) return undefined;
  return out;
}

/** Headers as the schema normalises them (packages/crawler/src/events/event.ts), when every value is one string. */
function fastHeaders(raw: unknown): Record<string, string> | undefined {
  if (!isPlainObject(raw)) return undefined;
  const names = Object.keys(raw);
  if (names.length > MAX_HEADERS) return undefined;
  // No prototype, as the schema keeps them: "__proto__" and "constructor" are header names like any.
  const out = Object.create(null) as Record<string, string>;
  for (const name of names) {
    const value = raw[name];
    const key = name.trim().toLowerCase();
    if (typeof value !== 'string' || key.length > MAX_HEADER_NAME || !HEADER_NAME.test(key)) return undefined;
    const text = classificationText(value, MAX_HEADER_VALUE);
    const before = out[key];
    out[key] = before === undefined ? text : `${before}\n${text}`;
  }
  return out;
}

/** The parsed event, or undefined: "ask parseEvent" (it may still be valid). */
export function fastParseEvent(raw: unknown): RequestOutcomeEvent | undefined {
  if (!isPlainObject(raw)) return undefined;
  const ts = fastTs(raw.ts);
  const site = fastSite(raw.site);
  const route = fastRoute(raw.route);
  if (ts === undefined || site === undefined || route === undefined) return undefined;
  const latency = raw.latencyMs;
  if (typeof latency !== 'number' || !Number.isFinite(latency) || latency < 0 || latency > MAX_LATENCY_MS)
    return undefined;
  const event: RequestOutcomeEvent = { ts, site, route, latencyMs: latency };
  for (const key of Object.keys(raw)) {
    const v = raw[key];
    if (v === undefined) continue;
    switch (key) {
      case 'ts':
      case 'site':
      case 'route':
      case 'latencyMs':
        break;
      case 'eventId':
        if (typeof v !== 'string' || !EVENT_ID.test(v)) return undefined;
        event.eventId = v;
        break;
      case 'pageType':
        if (!isLabel(v)) return undefined;
        event.pageType = v;
        break;
      case 'status':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 100 || v > 999) return undefined;
        event.status = v;
        break;
      case 'networkError':
        if (typeof v !== 'string' || !NETWORK_ERROR_SET.has(v)) return undefined;
        event.networkError = v as RequestOutcomeEvent['networkError'];
        break;
      case 'bytes':
        if (!isCount(v, MAX_BYTES)) return undefined;
        event.bytes = v;
        break;
      case 'retries':
        if (!isCount(v, MAX_INT32)) return undefined;
        event.retries = v;
        break;
      case 'credits':
        if (!isAmount(v)) return undefined;
        event.credits = v;
        break;
      case 'extraction': {
        const extraction = fastExtraction(v);
        if (!extraction) return undefined;
        event.extraction = extraction;
        break;
      }
      case 'canary':
        if (typeof v !== 'boolean') return undefined;
        event.canary = v;
        break;
      case 'outcome':
        if (typeof v !== 'string' || !OUTCOME_SET.has(v)) return undefined;
        event.outcome = v as RequestOutcomeEvent['outcome'];
        break;
      case 'outcomeReason':
        if (typeof v !== 'string' || v.length < 1 || v.length > 200 || !isStorableText(v)) return undefined;
        event.outcomeReason = v;
        break;
      case 'title':
        if (typeof v !== 'string') return undefined;
        event.title = classificationText(v.trim(), MAX_TITLE_CHARS);
        break;
      case 'bodySample':
        if (typeof v !== 'string') return undefined;
        event.bodySample = bodySampleOf(v, BODY_SAMPLE_CHARS);
        break;
      case 'headers': {
        const headers = fastHeaders(v);
        if (!headers) return undefined;
        event.headers = headers;
        break;
      }
      default:
        // Anything unknown: the schema decides.
        return undefined;
    }
  }
  if ((event.status === undefined) === (event.networkError === undefined)) return undefined;
  if (event.outcomeReason !== undefined && event.outcome === undefined) return undefined;
  return event;
}
