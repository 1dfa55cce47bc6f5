/**
 * The COPY payload of a batch, written byte by byte into one growing buffer. Ingestion's hot path:
 * building each row as a string (≈ 40 intermediate strings per row) and encoding it made string
 * garbage the largest cost of a batch after PostgreSQL itself. The bytes are exactly those of
 * `copyRow` (copy-raw.ts, the readable definition); test/unit/signal-store/copy-payload.test.ts checks
 * that on generated events, including escapes, non-ASCII text and fractional numbers.
 */
import type { Classification } from '@target-health/crawler/events/classify';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { field, storedTitle, textArrayField } from './copy-raw';

const TAB = 9;
const NEWLINE = 10;
const BACKSLASH = 92;
/** `\N`, COPY's NULL. */
const NULL_0 = 92;
const NULL_1 = 78;
const DIGIT_0 = 48;

export class CopyPayload {
  private buf: Buffer;
  private pos = 0;
  /** "YYYY-MM-DDTHH:MM:" of the last minute written: events of a batch mostly share it. */
  private minute = NaN;
  private readonly minutePrefix = Buffer.alloc(17);

  constructor(expectedRows: number) {
    this.buf = Buffer.allocUnsafe(Math.max(4096, expectedRows * 200));
  }

  /** The rows so far (a view of the buffer, not a copy). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  add(e: RequestOutcomeEvent, c: Classification): void {
    // Fixed-width parts of a row stay well below 256 bytes; text fields reserve their own room.
    this.reserve(256);
    const x = e.extraction;
    this.timestamp(e.ts);
    this.tab();
    this.text(e.site);
    this.tab();
    this.text(e.eventId);
    this.tab();
    this.text(e.route.country);
    this.tab();
    this.text(e.route.pool);
    this.tab();
    this.text(e.route.session);
    this.tab();
    this.text(e.pageType);
    this.tab();
    this.number(e.status);
    this.tab();
    this.text(e.networkError);
    this.tab();
    this.number(e.latencyMs);
    this.tab();
    this.number(e.bytes);
    this.tab();
    this.number(e.retries);
    this.tab();
    this.number(e.credits);
    this.tab();
    this.text(x?.result);
    this.tab();
    if (x?.missingFields && x.missingFields.length > 0) this.raw(textArrayField(x.missingFields));
    else this.nul();
    this.tab();
    this.number(x?.validRecords);
    this.tab();
    this.reserve(1);
    this.buf[this.pos++] = e.canary ? 116 : 102; // t / f
    this.tab();
    this.text(c.outcome);
    this.tab();
    this.text(c.rule);
    this.tab();
    this.text(c.evidence?.markerId);
    this.tab();
    this.text(storedTitle(e, c));
    this.reserve(1);
    this.buf[this.pos++] = NEWLINE;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  private tab(): void {
    this.reserve(1);
    this.buf[this.pos++] = TAB;
  }

  private nul(): void {
    this.reserve(2);
    this.buf[this.pos++] = NULL_0;
    this.buf[this.pos++] = NULL_1;
  }

  /** Already-escaped text (the array literal). */
  private raw(s: string): void {
    this.reserve(s.length * 3);
    this.pos += this.buf.write(s, this.pos);
  }

  /** A text field, escaped; ASCII (all but rare fields) without leaving this loop. */
  private text(v: string | undefined): void {
    if (v === undefined) return this.nul();
    // UTF-8 needs at most 3 bytes per UTF-16 unit; an escape needs 2 for a 1-byte character.
    this.reserve(v.length * 3);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < v.length; i++) {
      const ch = v.charCodeAt(i);
      if (ch >= 0x80) {
        // Non-ASCII: the rest goes through the string path (rare: labels and hosts are ASCII).
        this.pos = p + buf.write(field(v.slice(i)), p);
        return;
      }
      if (ch === BACKSLASH || ch === TAB || ch === NEWLINE || ch === 13) {
        buf[p++] = BACKSLASH;
        buf[p++] = ch === BACKSLASH ? BACKSLASH : ch === TAB ? 116 : ch === NEWLINE ? 110 : 114;
      } else {
        buf[p++] = ch;
      }
    }
    this.pos = p;
  }

  /** A number as `String(v)` writes it; whole numbers digit by digit. */
  private number(v: number | undefined): void {
    if (v === undefined) return this.nul();
    if (!Number.isSafeInteger(v) || v < 0) return this.raw(String(v));
    let digits = 1;
    for (let t = v; t >= 10; t = Math.floor(t / 10)) digits++;
    this.reserve(digits);
    let p = this.pos + digits;
    this.pos = p;
    let t = v;
    do {
      const next = Math.floor(t / 10);
      this.buf[--p] = DIGIT_0 + (t - next * 10);
      t = next;
    } while (t > 0);
  }

  /** ISO-8601 UTC with milliseconds, as Date#toISOString writes it. */
  private timestamp(ms: number): void {
    const minute = Math.floor(ms / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.minutePrefix.write(new Date(minute * 60_000).toISOString().slice(0, 17), 'latin1');
    }
    this.reserve(24);
    const buf = this.buf;
    let p = this.pos;
    this.minutePrefix.copy(buf, p);
    p += 17;
    const within = ms - minute * 60_000;
    const sec = Math.floor(within / 1000);
    const milli = within - sec * 1000;
    buf[p++] = DIGIT_0 + Math.floor(sec / 10);
    buf[p++] = DIGIT_0 + (sec % 10);
    buf[p++] = 46; // .
    buf[p++] = DIGIT_0 + Math.floor(milli / 100);
    buf[p++] = DIGIT_0 + (Math.floor(milli / 10) % 10);
    buf[p++] = DIGIT_0 + (milli % 10);
    buf[p++] = 90; // Z
    this.pos = p;
  }
}
