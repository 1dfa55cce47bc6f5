/**
 * Text rules of the event boundary. JavaScript strings are UTF-16 and may hold NUL or a lone surrogate
 * (half of an emoji, e.g. after a careless `slice`); PostgreSQL refuses NUL in `text` and both in
 * `jsonb`, so such a string in a stored field fails the whole batch it travels in. Stored text fields
 * therefore refuse them ({@link storableTextProblem}); classification-only text (body sample, title,
 * header values) is made well-formed instead (`wellFormed`, common/well-formed.ts), because a crawler cutting a
 * page with `html.slice(0, 65536)` must not lose the event. Cuts fall on code-point boundaries.
 * Pure: runs in crawler processes and anywhere `signals/` is imported.
 */

import { cutText, isWellFormed, wellFormed } from '../common/well-formed';

/** Why `s` cannot be stored as text, or undefined: for field messages ("must be … without …"). */
export function storableTextProblem(s: string): string | undefined {
  if (s.indexOf('\u0000') !== -1) return 'the NUL character (\\u0000)';
  if (!isWellFormed(s)) return 'a lone UTF-16 surrogate (half of a character such as an emoji, e.g. from a cut string)';
  return undefined;
}

/** Classification-only text: cut to `max` on a code-point boundary, then made well-formed. */
export function classificationText(s: string, max: number): string {
  return wellFormed(cutText(s, max, ''));
}
