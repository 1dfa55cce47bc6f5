/**
 * One batch of NDJSON lines → valid events and rejected lines (numbered), for `target-health ingest`.
 * Runs in the ingest worker threads; pure apart from the parsers it calls.
 */
import { parseBatch, type ParseBatchOptions } from '../db/signal-store/ingest';
import type { RejectedLine } from '../db/signal-store/types';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import type { BatchLine } from './ingest-messages';
import { MAX_LINE_BYTES } from './ingest-lines';
import { largestFieldOf, type LargestField } from './line-fields';

export interface ParsedLines {
  events: RequestOutcomeEvent[];
  /** The line number of each event. */
  lines: number[];
  /** In line order. */
  rejected: RejectedLine[];
  blank: number;
}

/** Blank or whitespace-only (editors add blank lines at the end); cheap for the usual "{...". */
function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) !== 123 && line.trim() === '');
}

/** Names the field that made the line long (the reader measured them); bodySample has its own advice. */
function TOO_LONG(bytes: number, largest?: LargestField): string {
  const head = `longer than ${MAX_LINE_BYTES.toLocaleString('en')} bytes (${bytes.toLocaleString('en')})`;
  const tail = ' — the line was not stored';
  if (largest === undefined) return `${head}; each line must be one event, far smaller than that${tail}`;
  const name = fieldName(largest.name);
  const held = `${name} holds ${largest.bytes.toLocaleString('en')} bytes of it`;
  if (name === 'bodySample') return `${head}: ${held}; cut bodySample to 64 KB (only that much is read)${tail}`;
  return `${head}: ${held}; send ${name} shorter (an event is far smaller)${tail}`;
}
const fieldName = (name: string): string =>
  /^[A-Za-z0-9_$-]{1,64}$/.test(name) ? name : JSON.stringify(cutText(name, 64, '…'));
const NOT_UTF8 = (at: number) =>
  `not valid UTF-8 (bad byte at byte ${at} of the line); write the file as UTF-8 — the line was not stored ` +
  `rather than stored with replacement characters`;

/** `lines[i]` is line `firstLine + i` of the input. */
export function parseNdjsonLines(
  lines: readonly BatchLine[],
  firstLine: number,
  options: ParseBatchOptions = {},
): ParsedLines {
  const objects: unknown[] = [];
  const objectLines: number[] = [];
  const rejected: RejectedLine[] = [];
  let blank = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const number = firstLine + i;
    if (typeof line !== 'string') {
      rejected.push({
        line: number,
        errors: [line.unreadable === 'too-long' ? TOO_LONG(line.bytes, line.largest) : NOT_UTF8(line.at ?? 0)],
      });
      continue;
    }
    if (isBlank(line)) {
      // A blank line holds no event: counted, not an error.
      blank += 1;
      continue;
    }
    // Lines come from the reader, which measures bytes; this guards callers that hand strings directly.
    if (line.length > MAX_LINE_BYTES) {
      const bytes = Buffer.from(line, 'utf8');
      rejected.push({ line: number, errors: [TOO_LONG(bytes.length, largestFieldOf(bytes) ?? undefined)] });
      continue;
    }
    try {
      objects.push(JSON.parse(line));
      objectLines.push(number);
    } catch (err) {
      // V8 quotes a piece of the line in its message: keep it short and printable.
      const detail = wellFormed(cutText((err as Error).message, 200, ''));
      rejected.push({ line: number, errors: [`not valid JSON (${detail}); each line must be one JSON object`] });
    }
  }
  const parsed = parseBatch(objects, 0, undefined, options);
  for (const r of parsed.rejected) rejected.push({ line: objectLines[r.line]!, errors: r.errors });
  rejected.sort((a, b) => a.line - b.line);
  return { events: parsed.events, lines: parsed.lines.map((i) => objectLines[i]!), rejected, blank };
}
