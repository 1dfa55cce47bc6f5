/**
 * Text rules of the event boundary. JavaScript strings are UTF-16 and may hold NUL or a lone surrogate
 * (half of an emoji, e.g. after a careless `slice`); PostgreSQL refuses NUL in `text` and both in
 * `jsonb`, so such a string in a stored field fails the whole batch it travels in. Stored text fields
 * therefore refuse them ({@link storableTextProblem}); classification-only text (body sample, title,
 * header values) is made well-formed instead (`wellFormed`, well-formed.ts), because a crawler cutting a
 * page with `html.slice(0, 65536)` must not lose the event. Cuts fall on code-point boundaries.
 * Pure: runs in crawler processes and anywhere `signals/` is imported.
 */

import { cutText, isWellFormed, wellFormed } from './well-formed';

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

/**
 * Between the head and the tail of a sample cut from a large page. Plain text a page would not contain
 * (so no marker matches across it) and that says what happened to a reader of a stored sample.
 */
export const SAMPLE_GAP = '\n[… middle of the page left out …]\n';

/**
 * The part of a page the classifier needs, in at most `max` characters: the whole page when it fits, else
 * its head and its tail (half each). Vendors' markers sit in the head of their own pages (title, first
 * script) but site-branded block pages, large Cloudflare ones especially, carry them in the last kilobytes
 * (the challenge script before `</body>`): a head-only cut read those as ordinary 200s
 * (docs/classification.md, "Pages larger than the sample"). Cuts fall on code-point boundaries; the result
 * is well formed. Used by every sender (Crawlee adapter, recorder, Scrapy's twin in Python) and by the event
 * boundary itself, so a sender that sends a whole page gets the same sample.
 */
export function bodySampleOf(body: string, max: number): string {
  if (body.length <= max) return wellFormed(body);
  const half = Math.floor((max - SAMPLE_GAP.length) / 2);
  let tailStart = body.length - half;
  // Do not start on the second half of a surrogate pair.
  const unit = body.charCodeAt(tailStart);
  if (unit >= 0xdc00 && unit <= 0xdfff) tailStart += 1;
  return wellFormed(`${cutText(body, half, '')}${SAMPLE_GAP}${body.slice(tailStart)}`);
}
