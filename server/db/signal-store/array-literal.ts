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
