/**
 * Site names. A site is a normalised host: it keys the per-site workflow (`site-health:<site>`), the
 * signal store and every per-site setting, so two spellings of one host must never become two sites.
 * Normalising is lenient about form (case, scheme, port, path, trailing dot, Unicode) and strict about
 * substance (a real DNS-style name with at least two labels, or an IPv4 address).
 */
import { punycodeEncode } from './punycode';
import { cutText } from './well-formed';
import { oneLine } from './zod-issues';

export const SITE_EXAMPLE = 'shop.example.com';

/** A site that cannot be normalised; `detail` says what is wrong with it. */
export class SiteNameError extends Error {
  constructor(
    readonly input: string,
    readonly detail: string,
  ) {
    super(`must be a host name like ${SITE_EXAMPLE} (got ${quote(input)}): ${detail}`);
    this.name = 'SiteNameError';
  }
}

export type SiteNameResult = { ok: true; site: string } | { ok: false; error: SiteNameError };

const MAX_HOST_LENGTH = 253;
/**
 * Longest `site` value looked at. A URL (crawlers often send the request URL) may carry a long query,
 * so this is generous; it exists so that no input makes normalisation expensive (see below).
 */
export const MAX_SITE_INPUT_CHARS = 8192;
/**
 * Longest non-ASCII label, in code points, that can still fit 63 characters once encoded ("xn--" + ≥ 1 per code point).
 */
const MAX_UNICODE_LABEL_CODE_POINTS = 59;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const UNICODE_LABEL = /^[\p{L}\p{M}\p{N}-]+$/u;
// Full stops that IDNA treats as label separators (ideographic, fullwidth, halfwidth; NFKC already maps the last two).
const IDN_DOTS = /[\u3002\uff0e\uff61]/g;
// Zero-width spaces, joiners, soft hyphens, variation selectors…: invisible, and ignored by IDNA (UTS #46).
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * Like {@link normaliseSite} but returns the error instead of throwing (for validators).
 *
 * Every step is linear in the input and lengths are checked before the one step that is not (Punycode
 * encoding is quadratic in a label's length): one hostile line cannot cost seconds of CPU.
 */
export function tryNormaliseSite(input: string): SiteNameResult {
  const fail = (detail: string): SiteNameResult => ({ ok: false, error: new SiteNameError(input, detail) });

  if (input.length > MAX_SITE_INPUT_CHARS)
    return fail(`it is longer than ${MAX_SITE_INPUT_CHARS} characters; send the host name`);
  // UTS #46 mapping, the part that matters for keys: compatibility forms (full-width letters and
  // dots) become their plain form and invisible characters go, so "ｓｈｏｐ．example.com" and
  // "shop\u200b.example.com" are the site "shop.example.com", not two more sites.
  let host = input.trim().normalize('NFKC').replace(DEFAULT_IGNORABLE, '');
  if (host === '') return fail('it is empty');
  if (/\s/.test(host)) return fail('it contains white space');
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^\/\//, '');
  host = host.split(/[/?#]/, 1)[0] ?? '';
  const at = host.lastIndexOf('@');
  if (at >= 0) host = host.slice(at + 1);
  if (host.startsWith('[')) return fail('IPv6 literals are not supported; use the host name');
  host = host.replace(/:\d*$/, '');
  if (host.includes(':')) return fail('it contains ":" outside a port number');
  // Lower-casing can leave a string that is not in normal form (e.g. "İ"): normalise again.
  host = host.replace(IDN_DOTS, '.').toLowerCase().normalize('NFKC');
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return fail('there is no host in it');
  // Encoded, every code point takes at least one character: a host this long cannot fit.
  if (host.length > 2 * MAX_HOST_LENGTH) return fail(`it is longer than ${MAX_HOST_LENGTH} characters`);

  const labels = host.split('.');
  const ascii: string[] = [];
  for (const label of labels) {
    if (label === '') return fail('it has an empty label ("..")');
    const invalid = () =>
      fail(`label ${quote(label)} may only hold letters, digits and inner hyphens, at most 63 characters`);
    let encoded = label;
    // eslint-disable-next-line no-control-regex
    if (!/^[\x00-\x7f]*$/.test(label)) {
      // Letters, marks and digits of any script (IDNA allows no symbols, controls or lone surrogates).
      if (!UNICODE_LABEL.test(label) || codePointCount(label) > MAX_UNICODE_LABEL_CODE_POINTS) return invalid();
      encoded = `xn--${punycodeEncode(label)}`;
    }
    if (!LABEL.test(encoded)) return invalid();
    ascii.push(encoded);
  }
  if (ascii.length < 2) return fail(`${quote(host)} is a single label; a site needs at least two, e.g. ${host}.com`);

  if (ascii.every((l) => /^\d+$/.test(l))) {
    const ipv4 = ascii.length === 4 && ascii.every((l) => Number(l) <= 255 && (l === '0' || !l.startsWith('0')));
    return ipv4 ? { ok: true, site: ascii.join('.') } : fail('it looks numeric but is not a valid IPv4 address');
  }
  if (/^\d+$/.test(ascii[ascii.length - 1] ?? '')) return fail('the top-level label cannot be all digits');
  const site = ascii.join('.');
  if (site.length > MAX_HOST_LENGTH) return fail(`it is longer than ${MAX_HOST_LENGTH} characters`);
  return { ok: true, site };
}

function codePointCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Normalises a host or URL to the site key: lower-case ASCII host, no scheme, credentials, port, path or
 * trailing dot; Unicode labels become `xn--` Punycode after NFKC, removal of default-ignorable characters
 * (zero-width spaces…) and lower-casing — the mapping steps of UTS #46 that decide which host is meant;
 * its full validity rules are out of scope. Throws {@link SiteNameError} for anything that is not a host.
 *
 *   normaliseSite('https://Shop.Example.COM:8443/p/1?x') === 'shop.example.com'
 *   normaliseSite('bücher.example') === 'xn--bcher-kva.example'
 */
export function normaliseSite(input: string): string {
  const result = tryNormaliseSite(input);
  if (!result.ok) throw result.error;
  return result.site;
}

/** The input as a quoted, short, one-line echo (JSON escapes C0 controls; oneLine the rest, e.g. U+2028, NEL). */
function quote(value: string): string {
  return oneLine(JSON.stringify(value.length > 80 ? `${cutText(value, 77, '')}...` : value));
}
