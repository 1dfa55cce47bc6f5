/**
 * PostgreSQL array literals built by hand for the ingest hot path. node-postgres serialises JS arrays
 * element by element with generic escaping (~250 ns each); batches of thousands of events × twenty
 * columns make that the largest single cost of an insert. These produce the same literal in ~30 ns.
 */
export function numberArray(values: ReadonlyArray<number | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    out += v === null || v === undefined ? 'NULL' : String(v);
  }
  return `${out}}`;
}

const NEEDS_ESCAPE = /["\\]/;

/** Every element quoted (so "NULL", spaces and commas inside strings stay strings); `"` and `\` escaped. */
export function textArray(values: ReadonlyArray<string | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else out += NEEDS_ESCAPE.test(v) ? `"${v.replace(/[\\"]/g, '\\$&')}"` : `"${v}"`;
  }
  return `${out}}`;
}

export function boolArray(values: readonly boolean[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) out += (i > 0 ? ',' : '') + (values[i] ? 't' : 'f');
  return `${out}}`;
}

const COMMA = 44;
const ZERO = 48;
const NINE = 57;

/**
 * Reads `{1,0,3}` (an integer array's text, as `::text` prints it) into `into`, returning how many it
 * appended — or -1 if the text is anything else: a negative number, a NULL element, a nested array, a
 * space. Strict, so that what it accepts is exactly "non-negative integers" (exact below 2^53; the caller
 * bounds the sums). node-postgres's array parser builds a string per element first and is several times
 * slower: a replay reads hundreds of thousands of these (server/db/signal-store/period-rows.ts).
 */
export function readCountArray(text: string, into: number[]): number {
  const end = text.length - 1;
  if (text.charCodeAt(0) !== 123 || text.charCodeAt(end) !== 125) return -1;
  if (end === 1) return 0;
  let n = 0;
  let digits = 0;
  let count = 0;
  for (let i = 1; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= ZERO && c <= NINE) {
      n = n * 10 + (c - ZERO);
      digits += 1;
    } else if (c === COMMA && digits > 0) {
      into.push(n);
      count += 1;
      n = 0;
      digits = 0;
    } else return -1;
  }
  if (digits === 0) return -1;
  into.push(n);
  return count + 1;
}
