/**
 * Proxy URLs: the production route a canary travels through. Only HTTP(S) forward proxies are accepted
 * (what the crawler fleet uses and what undici's ProxyAgent speaks), with an explicit host and port so
 * a typo such as "proxy.internal" (no port) is caught when the canary is defined, not at 3 a.m.
 * Credentials in proxy URLs are secrets: everything shown to people goes through {@link redactProxyUrl}.
 */
import { redactText } from '../common/redact';

export type ProxyUrlCheck = { ok: true; url: string } | { ok: false; problem: string };

const HINT = 'use http://host:port or http://user:password@host:port (https:// for a TLS proxy)';

export function checkProxyUrl(raw: string): ProxyUrlCheck {
  const shown = JSON.stringify(redactProxyUrl(raw));
  let url: URL;
  try {
    // "localhost:8080" parses as a URL with scheme "localhost": insist on scheme://.
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw.trim())) throw new TypeError('no scheme');
    url = new URL(raw);
  } catch {
    return { ok: false, problem: `${shown} is not a proxy URL; ${HINT}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      ok: false,
      problem: `${shown} has scheme "${url.protocol.replace(/:$/, '')}"; only HTTP(S) proxies are supported: ${HINT}`,
    };
  }
  if (url.hostname === '') return { ok: false, problem: `${shown} has no host; ${HINT}` };
  // URL drops a port equal to the scheme's default, so look for it in the text as written.
  if (url.port === '' && !/^[a-z]+:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/?#]*):\d+(?:[/?#]|$)/i.test(raw.trim())) {
    return { ok: false, problem: `${shown} has no port; ${HINT}` };
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    return {
      ok: false,
      problem: `${shown} has a path or query; a proxy URL is only scheme, credentials, host and port: ${HINT}`,
    };
  }
  return { ok: true, url: raw.trim() };
}

/**
 * The URL as written, without its password (user names stay: they often encode the pool or country).
 * Textual on purpose: re-serialising through URL would change what the person typed (default ports).
 * The shared redaction (core/common/redact.ts) masks passwords holding `:`, `/`, `@` or `%`-escapes whole.
 */
export function redactProxyUrl(raw: string): string {
  return redactText(raw);
}

/** host:port of a proxy URL (no credentials), a safe label for events and listings. */
export function proxyEndpoint(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return 'unknown-proxy';
  }
}
