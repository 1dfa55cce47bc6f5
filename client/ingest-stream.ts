/**
 * NDJSON ingestion for `target-health ingest`: read lines, validate in batches, and write each batch
 * while the next one is parsed (two writes in flight keep both cores busy). Every rejected line is
 * reported with its number; valid lines are stored whatever their neighbours look like.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parseBatch } from '../db/signal-store/ingest';
import type { RequestOutcomeEvent } from '../signals/event';
import type { RejectedLine } from '../db/signal-store/types';

export interface StreamIngestOptions {
  /** Stores a parsed batch; absent for --dry-run. */
  store?: (events: readonly RequestOutcomeEvent[]) => Promise<{ inserted: number; duplicates: number }>;
  batchSize: number;
  maxInFlight: number;
  onRejected: (rejected: RejectedLine) => void;
  onProgress?: (bytesRead: number, eventsRead: number) => void;
}

export interface StreamIngestSummary {
  lines: number;
  accepted: number;
  inserted: number;
  duplicates: number;
  rejected: number;
  blank: number;
  elapsedMs: number;
}

const MAX_LINE_CHARS = 1_000_000;

const toError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * The lines of a stream (LF or CRLF), handed over a whole chunk at a time: an async generator yielding
 * each line costs a promise per line, and line splitting is on the ingest hot path.
 */
async function* lineChunks(input: Readable): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    const lines: string[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      lines.push(text.slice(start, end));
      start = nl + 1;
    }
    rest = text.slice(start);
    if (lines.length > 0) yield lines;
  }
  rest += decoder.end();
  if (rest !== '') yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}

/** Blank or whitespace-only (editors add blank lines at the end); cheap for the usual "{...". */
function isBlank(line: string): boolean {
  return line.length === 0 || (line.charCodeAt(0) !== 123 && line.trim() === '');
}

export async function ingestStream(input: Readable, options: StreamIngestOptions): Promise<StreamIngestSummary> {
  const started = Date.now();
  const summary: StreamIngestSummary = { lines: 0, accepted: 0, inserted: 0, duplicates: 0, rejected: 0, blank: 0, elapsedMs: 0 };
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let batch: unknown[] = [];
  // Line number of each batch entry: blank and broken lines in between do not shift the numbering.
  let batchLines: number[] = [];
  // Lines refused before validation (not JSON, too long), reported with the batch, in line order.
  let early: RejectedLine[] = [];
  let bytesRead = 0;

  const flush = async (): Promise<void> => {
    const { events, rejected } = parseBatch(batch, 0);
    const lineOf = batchLines;
    const all = [...early, ...rejected.map((r) => ({ line: lineOf[r.line]!, errors: r.errors }))].sort((a, b) => a.line - b.line);
    batch = [];
    batchLines = [];
    early = [];
    for (const r of all) options.onRejected(r);
    summary.rejected += all.length;
    summary.accepted += events.length;
    if (!options.store || events.length === 0) return;
    const write = options
      .store(events)
      .then((r) => {
        summary.inserted += r.inserted;
        summary.duplicates += r.duplicates;
      })
      .catch((err: unknown) => {
        failure ??= err;
      });
    const tracked = write.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= options.maxInFlight) await Promise.race(inFlight);
    if (failure) throw toError(failure);
  };

  for await (const lines of lineChunks(input)) {
    for (const line of lines) {
      summary.lines += 1;
      bytesRead += line.length + 1;
      if (isBlank(line)) {
        // A blank line holds no event (editors add them at the end): counted, not an error.
        summary.blank += 1;
        continue;
      }
      if (line.length > MAX_LINE_CHARS) {
        early.push({ line: summary.lines, errors: [`longer than ${MAX_LINE_CHARS} characters; send bodySample cut to 64 KB`] });
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        early.push({ line: summary.lines, errors: [`not valid JSON (${(err as Error).message}); each line must be one JSON object`] });
        continue;
      }
      batch.push(json);
      batchLines.push(summary.lines);
      if (batch.length >= options.batchSize) {
        await flush();
        options.onProgress?.(bytesRead, summary.lines);
      }
    }
  }
  await flush();
  await Promise.all(inFlight);
  if (failure) throw toError(failure);
  options.onProgress?.(bytesRead, summary.lines);
  summary.elapsedMs = Date.now() - started;
  return summary;
}
