/**
 * Strings PostgreSQL can store. JavaScript strings are UTF-16 and may hold NUL or a lone surrogate (one
 * half of an emoji, e.g. after a careless `slice`); PostgreSQL refuses NUL in `text` and both in `jsonb`
 * ("\u0000", "\ud83d"), so one odd character from a crawled page fails a whole insert — and an activity
 * that fails on its data retries forever. Clean text at the storage boundary with {@link wellFormed} and
 * shorten it with {@link cutText}, which never splits a surrogate pair. Pure: workflow code may import it.
 */

/** What replaces NUL and lone surrogates (U+FFFD, the Unicode replacement character: visibly "something was here"). */
export const REPLACEMENT_CHARACTER = '\uFFFD';

// NUL, or a UTF-16 surrogate not part of a pair (in a `u` regex a pair is one code point, so \p{Cs}
// matches only lone ones).
// eslint-disable-next-line no-control-regex
const ILL_FORMED = /[\u0000\p{Cs}]/gu;

/**
 * `String.prototype.isWellFormed` (ES2024, in every Node this project supports): native, instant on one-byte strings.
 */
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** True when `text` holds no NUL and no lone surrogate (storable as PostgreSQL text and jsonb). */
export function isWellFormed(text: string): boolean {
  if (text.indexOf('\u0000') !== -1) return false;
  if (nativeIsWellFormed) return nativeIsWellFormed.call(text);
  ILL_FORMED.lastIndex = 0;
  return !ILL_FORMED.test(text);
}

/** `text` with every NUL and lone surrogate replaced by U+FFFD; unchanged when already well formed. */
export function wellFormed(text: string): string {
  return isWellFormed(text) ? text : text.replace(ILL_FORMED, REPLACEMENT_CHARACTER);
}

/**
 * At most `max` UTF-16 code units, `ellipsis` included when the text is cut. The cut falls on a code
 * point boundary: a surrogate pair straddling it is dropped whole rather than halved.
 */
export function cutText(text: string, max: number, ellipsis = '…'): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - ellipsis.length);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end -= 1;
  return `${text.slice(0, end)}${ellipsis}`;
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * JSON text that PostgreSQL's `jsonb` takes: every string value made well formed first (JSON.stringify
 * writes a lone surrogate as `\ud83d`, which jsonb refuses like NUL). For payloads that carry text from
 * crawled pages (evidence, canary excerpts) into the audit trail and the outbox.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? wellFormed(v) : v));
}
