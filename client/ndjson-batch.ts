/**
 * One batch of NDJSON lines → valid events and rejected lines (numbered), for `target-health ingest`.
 * Runs in the ingest worker threads; pure apart from the parsers it calls.
 */
import { parseBatch, type ParseBatchOptions } from '../db/signal-store/ingest';
import type { RejectedLine } from '../db/signal-store/types';
import type { RequestOutcomeEvent } from '../signals/event';
import { cutText, wellFormed } from '../common/well-formed';
import type { BatchLine } from './ingest-messages';
import { MAX_LINE_BYTES } from './ingest-lines';

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

const TOO_LONG = (bytes: number) =>
  `longer than ${MAX_LINE_BYTES.toLocaleString('en')} bytes (${bytes.toLocaleString('en')}); cut bodySample to 64 KB (only that much is read) — the line was not stored`;
const NOT_UTF8 = (at: number) =>
  `not valid UTF-8 (bad byte at byte ${at} of the line); write the file as UTF-8 — the line was not stored rather than stored with replacement characters`;

/** `lines[i]` is line `firstLine + i` of the input. */
export function parseNdjsonLines(lines: readonly BatchLine[], firstLine: number, options: ParseBatchOptions = {}): ParsedLines {
  const objects: unknown[] = [];
  const objectLines: number[] = [];
  const rejected: RejectedLine[] = [];
  let blank = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const number = firstLine + i;
    if (typeof line !== 'string') {
      rejected.push({ line: number, errors: [line.unreadable === 'too-long' ? TOO_LONG(line.bytes) : NOT_UTF8(line.at ?? 0)] });
      continue;
    }
    if (isBlank(line)) {
      // A blank line holds no event: counted, not an error.
      blank += 1;
      continue;
    }
    // Lines come from the reader, which measures bytes; this guards callers that hand strings directly.
    if (line.length > MAX_LINE_BYTES) {
      rejected.push({ line: number, errors: [TOO_LONG(Buffer.byteLength(line))] });
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
