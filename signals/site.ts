/**
 * Site names. A site is a normalised host: it keys the per-site workflow (`site-health:<site>`), the
 * signal store and every per-site setting, so two spellings of one host must never become two sites.
 * Normalising is lenient about form (case, scheme, port, path, trailing dot, Unicode) and strict about
 * substance (a real DNS-style name with at least two labels, or an IPv4 address).
 */
import { punycodeEncode } from './punycode';

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
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// Full stops that IDNA treats as label separators (ideographic, fullwidth, halfwidth).
const IDN_DOTS = /[\u3002\uff0e\uff61]/g;

/** Like {@link normaliseSite} but returns the error instead of throwing (for validators). */
export function tryNormaliseSite(input: string): SiteNameResult {
  const fail = (detail: string): SiteNameResult => ({ ok: false, error: new SiteNameError(input, detail) });

  let host = input.trim();
  if (host === '') return fail('it is empty');
  if (/\s/.test(host)) return fail('it contains white space');
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^\/\//, '');
  host = host.split(/[/?#]/, 1)[0] ?? '';
  const at = host.lastIndexOf('@');
  if (at >= 0) host = host.slice(at + 1);
  if (host.startsWith('[')) return fail('IPv6 literals are not supported; use the host name');
  host = host.replace(/:\d*$/, '');
  if (host.includes(':')) return fail('it contains ":" outside a port number');
  host = host.replace(IDN_DOTS, '.').normalize('NFC').toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return fail('there is no host in it');

  const labels = host.split('.');
  const ascii: string[] = [];
  for (const label of labels) {
    if (label === '') return fail('it has an empty label ("..")');
    // eslint-disable-next-line no-control-regex
    const encoded = /^[\x00-\x7f]*$/.test(label) ? label : `xn--${punycodeEncode(label)}`;
    if (!LABEL.test(encoded)) {
      return fail(
        `label ${quote(label)} may only hold letters, digits and inner hyphens, at most 63 characters`,
      );
    }
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

/**
 * Normalises a host or URL to the site key: lower-case ASCII host, no scheme, credentials, port, path or
 * trailing dot; Unicode labels become `xn--` Punycode (NFC + lower-casing; full UTS #46 mapping is out of
 * scope). Throws {@link SiteNameError} for anything that is not a host.
 *
 *   normaliseSite('https://Shop.Example.COM:8443/p/1?x') === 'shop.example.com'
 *   normaliseSite('bücher.example') === 'xn--bcher-kva.example'
 */
export function normaliseSite(input: string): string {
  const result = tryNormaliseSite(input);
  if (!result.ok) throw result.error;
  return result.site;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
}
