/**
 * A count with its noun, singular for exactly one (`1 tick`, `2 ticks`, `0 ticks`): every sentence
 * that prints a number before a noun goes through here, so none says `1 ticks` or hedges with `tick(s)`.
 * Pure, so the workflow's own texts use it too.
 */

/** `1 tick`, `3 ticks`; `many` for nouns that do not just add an s (`1 match`, `2 matches`). */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
