/**
 * The lines of an NDJSON byte stream, for `target-health ingest`: split on LF (a CR before it dropped),
 * decoded as UTF-8 — or handed over as an {@link UnreadableLine} when a line is longer than
 * {@link MAX_LINE_BYTES} (its bytes are counted, never held: memory stays bounded whatever the input;
 * which field holds most of them is noted, for the message) or is not valid UTF-8 (refused by line number instead of
 * stored with replacement characters).
 *
 * Lines are handed over a whole chunk at a time (an async generator yielding each line costs a promise
 * per line, and this is the ingest hot path); the complete lines inside a chunk are checked and decoded
 * in one go when they are valid UTF-8, which is the usual case.
 */
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { BatchLine, UnreadableLine } from './ingest-messages';
import { FieldSizes, largestFieldOf, type LargestField } from './line-fields';

/** Longest line read, in bytes: a legal event is far smaller (bodySample is cut to 64 KB anyway). */
export const MAX_LINE_BYTES = 1 << 20;

const LF = 10;
const CR = 13;

export interface LineChunk {
  lines: BatchLine[];
  /** Bytes of input consumed for this chunk (for progress). */
  bytes: number;
}

/** Where the first invalid byte of a (non-UTF-8) line is, approximately: for the message. */
function firstBadByte(line: Buffer): number {
  const text = line.toString('utf8');
  const at = text.indexOf('\uFFFD');
  return at < 0 ? 0 : Buffer.byteLength(text.slice(0, at));
}

/** A line refused for its length, with the field that holds most of it when it is a JSON object. */
function tooLong(bytes: number, largest: LargestField | null): UnreadableLine {
  return largest === null ? { unreadable: 'too-long', bytes } : { unreadable: 'too-long', bytes, largest };
}

function lineOf(bytes: Buffer): BatchLine {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
  const line = bytes.subarray(0, end);
  if (line.length > MAX_LINE_BYTES) return tooLong(line.length, largestFieldOf(line));
  if (!isUtf8(line)) return { unreadable: 'not-utf8', bytes: line.length, at: firstBadByte(line) };
  return line.toString('utf8');
}

/** The line that straddles chunks: its parts while it is short enough to keep, its size once it is not. */
class Carry {
  private parts: Buffer[] = [];
  private size = 0;
  /** Once the line is past the limit: its field sizes, fed as its bytes go by. */
  private fields: FieldSizes | null = null;

  get empty(): boolean {
    return this.size === 0;
  }

  add(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.fields !== null) {
      this.fields.feed(bytes);
    } else if (this.size > MAX_LINE_BYTES + 1) {
      // Past the limit the line is refused anyway: stop holding its bytes (one more for a CR), only measure them.
      this.fields = new FieldSizes();
      for (const part of this.parts) this.fields.feed(part);
      this.fields.feed(bytes);
      this.parts = [];
    } else {
      this.parts.push(Buffer.from(bytes));
    }
  }

  /** The line ending with `tail` (the bytes before its LF), and a fresh carry. */
  finish(tail: Buffer): BatchLine {
    const total = this.size + tail.length;
    let line: BatchLine;
    if (total <= MAX_LINE_BYTES + 1) {
      // Up to the limit plus a CR, every byte is held and lineOf decides.
      line = lineOf(this.parts.length === 0 ? tail : Buffer.concat([...this.parts, tail]));
    } else {
      const fields = this.fields ?? new FieldSizes();
      if (this.fields === null) for (const part of this.parts) fields.feed(part);
      fields.feed(tail);
      line = tooLong(total, fields.largest());
    }
    this.parts = [];
    this.size = 0;
    this.fields = null;
    return line;
  }
}

/** The complete lines of `region` (bytes between two LFs, LFs inside it separating lines). */
function regionLines(region: Buffer, into: BatchLine[]): void {
  if (isUtf8(region)) {
    const text = region.toString('utf8');
    let start = 0;
    for (let nl = text.indexOf('\n'); ; nl = text.indexOf('\n', start)) {
      const stop = nl === -1 ? text.length : nl;
      const end = stop > start && text.charCodeAt(stop - 1) === CR ? stop - 1 : stop;
      // A string of n UTF-16 units holds at most 3n bytes: only long ones need measuring.
      if ((end - start) * 3 > MAX_LINE_BYTES && Buffer.byteLength(text.slice(start, end)) > MAX_LINE_BYTES) {
        const line = Buffer.from(text.slice(start, end), 'utf8');
        into.push(tooLong(line.length, largestFieldOf(line)));
      } else {
        into.push(text.slice(start, end));
      }
      if (nl === -1) return;
      start = nl + 1;
    }
  }
  // Some line is not UTF-8: find which, line by line.
  let start = 0;
  for (let nl = region.indexOf(LF); ; nl = region.indexOf(LF, start)) {
    const stop = nl === -1 ? region.length : nl;
    into.push(lineOf(region.subarray(start, stop)));
    if (nl === -1) return;
    start = nl + 1;
  }
}

export async function* readLines(input: Readable): AsyncGenerator<LineChunk> {
  const carry = new Carry();
  let first = true;
  for await (const raw of input as AsyncIterable<Buffer | string>) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    const bytes = chunk.length;
    // A UTF-8 byte order mark at the very start (some editors write one) is not part of the first line.
    if (first && chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf)
      chunk = chunk.subarray(3);
    if (chunk.length > 0) first = false;
    const lines: BatchLine[] = [];
    const firstNl = chunk.indexOf(LF);
    if (firstNl === -1) {
      carry.add(chunk);
    } else {
      lines.push(carry.finish(chunk.subarray(0, firstNl)));
      const lastNl = chunk.lastIndexOf(LF);
      if (lastNl > firstNl) regionLines(chunk.subarray(firstNl + 1, lastNl), lines);
      carry.add(chunk.subarray(lastNl + 1));
    }
    yield { lines, bytes };
  }
  if (!carry.empty) yield { lines: [carry.finish(Buffer.alloc(0))], bytes: 0 };
}
