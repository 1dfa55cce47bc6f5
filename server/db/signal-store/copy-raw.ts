/**
 * The fast path for raw rows: COPY ... FROM STDIN in text format. COPY costs PostgreSQL about a third
 * of an INSERT from unnested arrays, but it cannot skip conflicting rows: a batch holding an event id
 * that is already stored makes it fail with a unique violation, and the caller then takes the slow,
 * conflict-aware path for that batch (rare: only retried batches contain repeats).
 */
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Classification } from '@target-health/crawler/events/classify';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';
import type { ClassifiedEvent } from './aggregate';

export const RAW_COLUMNS =
  'ts, site, event_id, country, pool, session, page_type, status, network_error, latency_ms, bytes, retries, ' +
  'credits, extraction, missing_fields, valid_records, canary, outcome, rule, marker_id, title';

const REFUSED: ReadonlySet<string> = new Set(['hard_block', 'challenge', 'soft_block']);

/**
 * The title stored with an event: a refused page's only (migration 013), what the console shows as an example
 * of what the site served; an ordinary page's title would only cost space.
 */
export function storedTitle(e: RequestOutcomeEvent, c: Classification): string | undefined {
  return REFUSED.has(c.outcome) ? e.title : undefined;
}

const NEEDS_COPY_ESCAPE = /[\\\t\n\r]/;

/** A text field in COPY's text format; `\N` is NULL. */
export function field(v: string | null | undefined): string {
  if (v === null || v === undefined) return '\\N';
  return NEEDS_COPY_ESCAPE.test(v)
    ? v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : v;
}

const num = (v: number | null | undefined): string => (v === null || v === undefined ? '\\N' : String(v));

/** A text[] value, as an array literal inside a COPY field. */
export function textArrayField(values: readonly string[] | undefined): string {
  if (!values || values.length === 0) return '\\N';
  return field(`{${values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`);
}

/**
 * ISO-8601 text of an epoch-ms instant. Events of a batch mostly share their minute, so the
 * "YYYY-MM-DDTHH:MM:" prefix is cached and only seconds and milliseconds are formatted per event.
 */
let cachedMinute = NaN;
let cachedPrefix = '';
export function isoTimestamp(ms: number): string {
  const minute = Math.floor(ms / 60_000);
  if (minute !== cachedMinute) {
    cachedMinute = minute;
    cachedPrefix = new Date(minute * 60_000).toISOString().slice(0, 17);
  }
  const withinMinute = ms - minute * 60_000;
  const sec = Math.floor(withinMinute / 1000);
  const milli = withinMinute - sec * 1000;
  return `${cachedPrefix}${sec < 10 ? '0' : ''}${sec}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/**
 * One COPY text row (with its newline) of a classified event: the readable definition of the format.
 * Ingestion writes the same bytes with {@link CopyPayload} (copy-payload.ts), without building strings.
 */
export function copyRow(e: RequestOutcomeEvent, c: Classification): string {
  const x = e.extraction;
  return (
    isoTimestamp(e.ts) +
    '\t' +
    field(e.site) +
    '\t' +
    field(e.eventId) +
    '\t' +
    field(e.route.country) +
    '\t' +
    field(e.route.pool) +
    '\t' +
    field(e.route.session) +
    '\t' +
    field(e.pageType) +
    '\t' +
    num(e.status) +
    '\t' +
    field(e.networkError) +
    '\t' +
    String(e.latencyMs) +
    '\t' +
    num(e.bytes) +
    '\t' +
    num(e.retries) +
    '\t' +
    num(e.credits) +
    '\t' +
    field(x?.result) +
    '\t' +
    textArrayField(x?.missingFields) +
    '\t' +
    num(x?.validRecords) +
    '\t' +
    (e.canary ? 't' : 'f') +
    '\t' +
    c.outcome +
    '\t' +
    c.rule +
    '\t' +
    field(c.evidence?.markerId) +
    '\t' +
    field(storedTitle(e, c)) +
    '\n'
  );
}

/** The COPY payload of a batch as text (the reference for tests; ingestion uses CopyPayload). */
export function copyText(batch: readonly ClassifiedEvent[]): string {
  let out = '';
  for (const { event, classification } of batch) out += copyRow(event, classification);
  return out;
}

export async function copyRaw(client: PoolClient, payload: Buffer): Promise<void> {
  const stream = client.query(copyFrom(`COPY request_events (${RAW_COLUMNS}) FROM STDIN`));
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(payload);
  });
}

/** PostgreSQL's unique_violation: some event id of the batch was stored before. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}
