/**
 * Which top-level field of a JSON object line holds the most bytes, read as the bytes go by and never
 * held: for the message of a line too long to be stored ("most of it is in headers"), which must name
 * the field that made it long rather than guess. Linear in the bytes; memory is a few counters and the
 * field name being read (capped). Works on UTF-8 bytes: every structural character is ASCII.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
/** Longest field name kept (bytes): a longer one is cut for the message. */
const MAX_NAME_BYTES = 128;

export interface LargestField {
  name: string;
  bytes: number;
}

export class FieldSizes {
  private pos = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Inside the top-level object, before a field's colon: the next string is its name. */
  private expectingName = false;
  private readingName = false;
  private name: number[] = [];
  private field: string | null = null;
  private valueStart = 0;
  private best: LargestField | null = null;

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++, this.pos++) {
      const b = bytes[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.inString = false;
          this.readingName = false;
        }
        if (this.readingName && this.name.length < MAX_NAME_BYTES) this.name.push(b);
        continue;
      }
      if (b === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && this.expectingName) {
          this.readingName = true;
          this.name = [];
        }
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        this.depth += 1;
        if (this.depth === 1) this.expectingName = b === OPEN_OBJECT;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (this.depth === 1) this.endField();
        this.depth -= 1;
      } else if (this.depth === 1 && b === COLON && this.expectingName) {
        this.expectingName = false;
        this.field = Buffer.from(this.name).toString('utf8');
        this.valueStart = this.pos + 1;
      } else if (this.depth === 1 && b === COMMA) {
        this.endField();
        this.expectingName = true;
      }
    }
  }

  /** The field with the most bytes (name and value, as written), or null when the line is no JSON object. */
  largest(): LargestField | null {
    // A line that ends inside a value (cut, or never closed): count that value up to the end.
    if (this.depth >= 1) this.endField();
    return this.best;
  }

  private endField(): void {
    if (this.field === null) return;
    const bytes = this.pos - this.valueStart;
    if (this.best === null || bytes > this.best.bytes) this.best = { name: this.field, bytes };
    this.field = null;
  }
}

/** The largest field of a line held whole (a string). */
export function largestFieldOf(line: Uint8Array): LargestField | null {
  const sizes = new FieldSizes();
  sizes.feed(line);
  return sizes.largest();
}
