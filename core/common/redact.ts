/**
 * What of a secret-bearing URL may be shown to people: the one place that decides it, used by the
 * banner of `npm start`, configuration errors, proxy listings, webhook errors and, as a safety net, by
 * every log line (server/logging/logger.ts). Pure: no I/O, no Node builtins, so any module may import it.
 *
 * - Passwords in URLs (`scheme://user:password@host`) become `***`; user names stay (proxy user names
 *   often name the pool or country, database user names help an operator). Where the password is, is
 *   decided by the WHATWG URL parser for a whole URL, and by the same rule written out for URLs inside
 *   free text (the authority ends at the first `/`, `?`, `#` or `\`; the user info ends at its last
 *   `@`), so `:`, `/`, `@`, `"` and `%`-escapes in a password are masked whole.
 * - Query parameters that carry secrets (`?password=`, `?token=`, `?api_key=`, `?sig=`…) become `***`.
 * - URLs whose path is the secret (Slack-style webhooks) are shown as their origin only: {@link urlOrigin}.
 */

export const MASK = '***';

/** Words that make a query parameter a secret wherever they stand in its name (`sslpassword`, `x_api_key`). */
const SECRET_PARAM_WORDS = [
  'password',
  'passwd',
  'secret',
  'token',
  'signature',
  'credential',
  'api[-_]?key',
  'access[-_]?key',
  'private[-_]?key',
];
/** Query parameters whose values are secrets, by name (libpq's `password`/`sslpassword`, API tokens, signed URLs). */
const SECRET_PARAM = new RegExp(`^(?:pass|pwd|key|sig|auth|.*(?:${SECRET_PARAM_WORDS.join('|')}))$`, 'i');

/** scheme:// or a scheme-relative //, where a URL with credentials may start inside free text. */
const URL_START = /(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\//g;

/**
 * Where a URL inside free text ends: white space (quotes and brackets may be in a password: `<`, `"` are legal there).
 */
const TOKEN_END = /\s/;

/** The authority of a URL ends here (WHATWG): `/`, `?`, `#`, and `\` too for the special schemes (http, https…). */
const AUTHORITY_END = /[/?#]/;
const SPECIAL_AUTHORITY_END = /[/?#\\]/;
const SPECIAL_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:', 'file:', '']);

/**
 * `raw` with its password and secret query values masked. A string the URL parser refuses (a raw `/` in
 * a password is one) is redacted as text ({@link redactText}), so nothing that looks like a credential
 * survives either way.
 */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return redactText(raw);
  }
  if (url.password !== '') url.password = MASK;
  if (url.search !== '') url.search = redactQuery(url.search.slice(1));
  return url.href;
}

/** scheme://host[:port] of a URL — no user info, no path, no query — for URLs whose path is a secret (webhooks). */
export function urlOrigin(raw: string): string {
  try {
    const url = new URL(raw.trim());
    return url.host === '' ? `${url.protocol}…` : `${url.protocol}//${url.host}`;
  } catch {
    return 'an invalid URL';
  }
}

/**
 * Free text (an error message, a log line, a banner) with the credentials of every URL in it masked:
 * `connect to postgres://app:s3:cr/t@db:5432/x failed` → `connect to postgres://app:***@db:5432/x failed`,
 * and the secret query values of bare paths too (`/v1/sites?access_token=…`, as a request log has them).
 */
export function redactText(text: string): string {
  return redactQueryPairs(redactUrlsInText(text));
}

function redactUrlsInText(text: string): string {
  if (!text.includes('//')) return text;
  let out = '';
  let from = 0;
  URL_START.lastIndex = 0;
  for (let m = URL_START.exec(text); m !== null; m = URL_START.exec(text)) {
    const start = m.index + m[0].length;
    let end = start;
    while (end < text.length && !TOKEN_END.test(text[end]!)) end++;
    const special = SPECIAL_SCHEMES.has(m[0].slice(0, -2).toLowerCase());
    out +=
      text.slice(from, start) +
      redactAfterSlashes(text.slice(start, end), special ? SPECIAL_AUTHORITY_END : AUTHORITY_END);
    from = end;
    URL_START.lastIndex = Math.max(end, start);
  }
  return out + text.slice(from);
}

/**
 * Exact secret strings (a webhook URL, an API key) replaced by `***` wherever they occur in `text`,
 * also in their percent-encoded form: for messages that may quote a value we know is secret.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue; // too short to be a secret worth a search, and would mangle text
    for (const form of new Set([secret, encodeURIComponent(secret), encodeURI(secret)]))
      out = out.split(form).join(MASK);
  }
  return out;
}

/** One URL's text after `//`: user info and secret query values masked. */
function redactAfterSlashes(token: string, authorityEndPattern: RegExp): string {
  const authorityEnd = token.search(authorityEndPattern);
  const authority = authorityEnd === -1 ? token : token.slice(0, authorityEnd);
  let userInfoEnd = authority.lastIndexOf('@');
  if (userInfoEnd === -1 && looksLikeCutPassword(authority)) {
    // A raw `/`, `?` or `#` (or `\` in an http URL) in a password ends the authority early (the parser then refuses the
    // URL): `user:pa/ss@host`. A colon followed by something other than a port is read as user info up
    // to the last `@` of the token; with no `@` at all (a password cut by a space in free text), the
    // rest of the authority is masked. Whole values go through redactUrl, which has the parser's answer.
    userInfoEnd = token.lastIndexOf('@');
    if (userInfoEnd === -1)
      return `${authority.slice(0, authority.indexOf(':'))}:${MASK}${token.slice(authority.length)}`;
  }
  let head = '';
  let rest = token;
  if (userInfoEnd !== -1) {
    const userInfo = token.slice(0, userInfoEnd);
    const colon = userInfo.indexOf(':');
    head = colon === -1 ? userInfo : `${userInfo.slice(0, colon)}:${MASK}`;
    rest = token.slice(userInfoEnd);
  }
  const query = rest.indexOf('?');
  if (query === -1) return head + rest;
  const hash = rest.indexOf('#', query);
  const queryText = hash === -1 ? rest.slice(query + 1) : rest.slice(query + 1, hash);
  return `${head}${rest.slice(0, query)}${redactQuery(queryText)}${hash === -1 ? '' : rest.slice(hash)}`;
}

/** A `?name=value` or `&name=value` pair anywhere in text: a query of a bare path (no scheme, no `//`). */
const QUERY_PAIR = /([?&])([^=&#?\s]+)=([^&#\s]*)/g;

/** `text` with the value of every secret-named query pair masked (`GET /v1/sites?access_token=***&limit=5`). */
function redactQueryPairs(text: string): string {
  if (!text.includes('=')) return text;
  return text.replace(QUERY_PAIR, (pair: string, sep: string, name: string, value: string) =>
    value !== MASK && isSecretQueryName(name) ? `${sep}${name}=${MASK}` : pair,
  );
}

/** `user:pa` (cut at a raw `/` in the password), not `host:8080`, `host` nor `[::1]:8080`. */
function looksLikeCutPassword(authority: string): boolean {
  if (authority.startsWith('[')) return false;
  const colon = authority.indexOf(':');
  return colon !== -1 && !/^\d*$/.test(authority.slice(colon + 1));
}

/** `?a=1&token=x` with the secret values masked; the other pairs as written. */
function redactQuery(query: string): string {
  if (query === '') return '?';
  const pairs = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq === -1) return pair;
    return isSecretQueryName(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=${MASK}` : pair;
  });
  return `?${pairs.join('&')}`;
}

/**
 * Whether a query parameter of this name carries a secret (`token`, `password`, `api_key`, `sig`,
 * `…secret…`): the rule {@link redactUrl} masks by, for callers that must find such values elsewhere
 * (a canary page echoing its own URL: core/canaries/page-url.ts).
 */
export function isSecretQueryName(name: string): boolean {
  return SECRET_PARAM.test(decodeName(name));
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** A value that is one URL and nothing else (the parser then knows where its password ends). */
function isWholeUrl(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Cheap test for a log line that may hold a URL credential or secret parameter (also of a bare path): most lines do
 * not.
 */
export function mayHoldUrlSecret(line: string): boolean {
  return (
    (line.includes('//') && line.includes('@')) || (line.includes('=') && (line.includes('//') || line.includes('?')))
  );
}

/**
 * A pino JSON line with every string value passed through {@link redactText}. Parsed rather than
 * scanned, so a password holding `"` (escaped in JSON) is masked whole and the line stays valid JSON.
 */
export function redactLogLine(line: string): string {
  if (!mayHoldUrlSecret(line)) return line;
  const newline = line.endsWith('\n') ? '\n' : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return redactText(line);
  }
  return JSON.stringify(redactStrings(parsed)) + newline;
}

function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return isWholeUrl(value) ? redactUrl(value) : redactText(value);
  if (Array.isArray(value)) return value.map(redactStrings);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactStrings(v);
    return out;
  }
  return value;
}
