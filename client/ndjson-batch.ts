/**
 * One batch of NDJSON lines → valid events and rejected lines (numbered), for `target-health ingest`.
 * Runs in the ingest worker threads; pure apart from the parsers it calls.
 */
import { parseBatch } from '../db/signal-store/ingest';
import type { RejectedLine } from '../db/signal-store/types';
import type { RequestOutcomeEvent } from '../signals/event';

export const MAX_LINE_CHARS = 1_000_000;

export interface ParsedLines {
  events: RequestOutcomeEvent[];
  /** In line order. */
  rejected: RejectedLine[];
  blank: number;
}

/** Blank or whitespace-only (editors add blank lines at the end); cheap for the usual "{...". */
function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) !== 123 && line.trim() === '');
}

/** `lines[i]` is line `firstLine + i` of the input. */
export function parseNdjsonLines(lines: readonly string[], firstLine: number): ParsedLines {
  const objects: unknown[] = [];
  const objectLines: number[] = [];
  const rejected: RejectedLine[] = [];
  let blank = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const number = firstLine + i;
    if (isBlank(line)) {
      // A blank line holds no event: counted, not an error.
      blank += 1;
      continue;
    }
    if (line.length > MAX_LINE_CHARS) {
      rejected.push({ line: number, errors: [`longer than ${MAX_LINE_CHARS} characters; send bodySample cut to 64 KB`] });
      continue;
    }
    try {
      objects.push(JSON.parse(line));
      objectLines.push(number);
    } catch (err) {
      rejected.push({ line: number, errors: [`not valid JSON (${(err as Error).message}); each line must be one JSON object`] });
    }
  }
  const parsed = parseBatch(objects, 0);
  for (const r of parsed.rejected) rejected.push({ line: objectLines[r.line]!, errors: r.errors });
  rejected.sort((a, b) => a.line - b.line);
  return { events: parsed.events, rejected, blank };
}
