/**
 * What of a canary's page URL is secret, and how it is kept out of everything people read. A canary's
 * URL is operator configuration, but a run is shown in many places: the state query and workflow
 * histories, notifications' evidence, `canary list --json` and `canary run`. The rules (docs/security.md):
 *
 * - **User info** (`user:password@`) is refused when a canary is defined: page credentials are not
 *   supported (the HTTP client would not even send them: undici drops them silently), and a user name
 *   alone can be a key. A URL stored before this rule still loads and runs; it is shown as `***@`.
 * - **Query parameters named like secrets** (`token`, `password`, `api_key`, `sig`, `…secret…`: the rule
 *   of core/common/redact.ts) are accepted — ordinary pages carry `?key=`, `?page_token=` or signed `?sig=`
 *   links, and refusing them would refuse valid canaries — and shown as `token=***`. Their values are
 *   stored in the `canaries` table only.
 * - **A page echoing its own URL** (a canonical link, a login redirect's `next=`) must not carry the
 *   values into a run's reason, evidence or checks: {@link pageTextCleaner} masks them there, and
 *   masks secret query values and passwords of any URL the page quotes.
 *
 * Pure (the URL parser only): workflow code may import it.
 */
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { isSecretQueryName, MASK, redactText, redactUrl, scrubSecrets } from '../common/redact';

/** The URL as people may see it: user info as `***@`, secret query values as `***`; otherwise exactly as written. */
export function redactPageUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return redactText(raw);
  }
  const userInfo = url.username !== '' || url.password !== '';
  if (!userInfo && secretQueryValues(url).length === 0) return raw;
  if (userInfo) {
    url.username = MASK;
    url.password = '';
  }
  return redactUrl(url.href);
}

/**
 * Why a URL being defined may not carry user info, or undefined. The URL is quoted redacted: the
 * refusal never echoes the credentials.
 */
export function pageCredentialsProblem(raw: string, maxEcho = 200): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined; // not a URL: the definition's URL check says so
  }
  if (url.username === '' && url.password === '') return undefined;
  return (
    `${describeValue(redactPageUrl(raw), maxEcho)} holds credentials (user:password@); page credentials are ` +
    `not supported: ` +
    'remove them and point the canary at a page anyone can load (give a route or proxy for how it travels)'
  );
}

/**
 * The values of a page URL that may appear in nothing people read: its user info and its secret query
 * values, each as written in the URL and decoded (a page may echo either form).
 */
export function pageUrlSecrets(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [];
  }
  const values = [url.username, url.password, ...secretQueryValues(url)].flatMap((v) => [v, decode(v)]);
  const forms = values.flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]);
  return [...new Set(forms)].filter((v) => v !== '');
}

/**
 * A function cleaning one text of a run (reason, evidence, a check's actual value): the URL's secret
 * values masked wherever they occur (exact values of 4 characters or more, also %-encoded), then the
 * password and secret query values of every URL quoted in the text — which also masks a value cut
 * short by an excerpt's length limit.
 */
export function pageTextCleaner(raw: string): (text: string) => string {
  const secrets = pageUrlSecrets(raw);
  return (text) => redactText(secrets.length === 0 ? text : scrubSecrets(text, secrets));
}

function secretQueryValues(url: URL): string[] {
  if (url.search === '') return [];
  return url.search
    .slice(1)
    .split('&')
    .flatMap((pair) => {
      const eq = pair.indexOf('=');
      return eq !== -1 && eq < pair.length - 1 && isSecretQueryName(pair.slice(0, eq)) ? [pair.slice(eq + 1)] : [];
    });
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}
