/**
 * One `POST /v1/events` body → the signal store, through the same code as `target-health ingest` and
 * the recorder: NDJSON lines are split and parsed by the CLI's reader and parser (server/ingest/ingest-lines.ts,
 * server/ingest/ndjson-batch.ts: 1 MiB lines, UTF-8 checked per line, blank lines skipped), a JSON array by the
 * store's `parseBatch`, and the valid events are classified and stored by the ingester in one
 * transaction (server/db/signal-store/ingest.ts). Rejections are numbered by their 0-based line (NDJSON) or
 * array index (JSON), with the ingester's messages.
 */
import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import type { Ingester, RejectedLine } from '../db/signal-store';
import { readLines } from '../ingest/ingest-lines';
import { parseNdjsonLines } from '../ingest/ndjson-batch';
import type { BatchLine } from '../ingest/ingest-messages';
import { EVENT_FIELDS } from '@target-health/crawler/events/event';
import type { IngestThreads } from './ingest-threads';
import { BodyError } from './request-body';

export const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson'] as const;
export const JSON_TYPE = 'application/json';
export const EVENT_MEDIA_TYPES: readonly string[] = [...NDJSON_TYPES, JSON_TYPE];

export const rejectedEventSchema = z.object({
  index: z.number().int().min(0).describe('0-based line of the NDJSON body, or index in the JSON array'),
  errors: z.array(z.string()).describe('one line each: the field, what is wrong and the fix'),
});

export const eventsResultSchema = z.object({
  accepted: z.number().int().describe('valid events (inserted + duplicates)'),
  inserted: z.number().int().describe('stored now'),
  duplicates: z.number().int().describe('already stored (same eventId): ignored'),
  rejected: z.array(rejectedEventSchema).describe('every refused line, in order; nothing of them was stored'),
});
export type EventsResult = z.output<typeof eventsResultSchema>;

/** A decoded body: a JSON array's elements, or an NDJSON body's lines. */
export interface Decoded {
  /** Event inputs for the store's parser (JSON array) … */
  inputs?: unknown[];
  /** … or NDJSON lines, 0-based. */
  lines?: BatchLine[];
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The JSON array of a body, or a 400 naming what is wrong with it as a whole. */
export function decodeJsonArray(body: Buffer): unknown[] {
  const bytes = body.subarray(0, 3).equals(BOM) ? body.subarray(3) : body;
  if (!isUtf8(bytes)) throw new BodyError(400, 'invalid_body', 'body: not valid UTF-8; send the events as UTF-8 JSON');
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    const detail = wellFormed(cutText((err as Error).message, 200, ''));
    throw new BodyError(
      400,
      'invalid_body',
      `body: not valid JSON (${detail}); send a JSON array of events, or NDJSON (one event per line) with ` +
        `Content-Type: application/x-ndjson`,
    );
  }
  if (!Array.isArray(value)) {
    throw new BodyError(
      400,
      'invalid_body',
      `body: must be a JSON array of events (got ` +
        `${value !== null && typeof value === 'object' ? 'an object' : describeValue(value, 40)}); wrap a single ` +
        `event in [ ]`,
    );
  }
  return value;
}

/** The lines of an NDJSON body, as `target-health ingest` reads a file. */
export async function decodeNdjsonLines(body: Buffer): Promise<BatchLine[]> {
  const lines: BatchLine[] = [];
  for await (const chunk of readLines(Readable.from([body]))) for (const line of chunk.lines) lines.push(line);
  return lines;
}

/**
 * Validates, classifies and stores one decoded body; the store's transaction has committed on return.
 * NDJSON lines go to the ingest threads when there are some (the same parser and store, off the event loop).
 */
export async function ingestBody(
  ingester: Ingester,
  decoded: Decoded,
  now: number,
  threads?: IngestThreads,
): Promise<EventsResult> {
  let rejected: RejectedLine[];
  let inserted: number;
  let duplicates: number;
  if (decoded.lines !== undefined && threads !== undefined) {
    ({ rejected, inserted, duplicates } = await threads.run(decoded.lines));
  } else if (decoded.lines !== undefined) {
    const parsed = parseNdjsonLines(decoded.lines, 0, { now });
    const stored = await ingester.store(parsed.events, parsed.lines);
    rejected =
      stored.rejected.length === 0
        ? parsed.rejected
        : [...parsed.rejected, ...stored.rejected].sort((a, b) => a.line - b.line);
    ({ inserted, duplicates } = stored);
  } else {
    const result = await ingester.ingest(decoded.inputs ?? [], 0);
    ({ rejected, inserted, duplicates } = result);
  }
  return {
    accepted: inserted + duplicates,
    inserted,
    duplicates,
    rejected: rejected.map((r) => ({ index: r.line, errors: r.errors })),
  };
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set(EVENT_FIELDS);

/**
 * The metric label of one rejection message: the event field it names (the part before the first ':',
 * top-level: `route.country` → `route`), or what kind of line it was. Bounded to the event's own fields
 * and a few kinds — a crawler's misspelt field names must not each become a Prometheus series.
 */
export function rejectionField(message: string): string {
  const m = /^([A-Za-z_$][\w$]*)(?:[.[][^:]*)?:/.exec(message);
  if (m) {
    const name = m[1]!;
    if (KNOWN_FIELDS.has(name)) return name;
    if (name === 'event') return 'event';
  }
  // Named as sent (quoted when odd): `"évil key": unknown field; known fields: …`.
  if (message.includes(': unknown field')) return 'unknown_field';
  if (message.startsWith('not valid JSON')) return 'json';
  if (message.startsWith('not valid UTF-8')) return 'utf8';
  if (message.startsWith('longer than')) return 'line_length';
  if (message.startsWith('the database refused')) return 'database';
  return 'other';
}
