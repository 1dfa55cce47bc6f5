/**
 * The console's session and request rules, pure (no database, no clock of its own), so each is unit-tested
 * on its own and the routes only wire them:
 *   - a session id is 32 random bytes; the database keeps only its SHA-256 hash (as for API tokens,
 *     server/api/tokens.ts), so a leaked table holds no usable session;
 *   - a session ends after {@link SESSION_IDLE_MS} without a request or {@link SESSION_ABSOLUTE_MS} after
 *     sign-in, whichever comes first: a forgotten browser stops working overnight, a busy one weekly;
 *   - the cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's request carries it)
 *     and Secure when the console is served over TLS;
 *   - a state-changing request must come from the console's own origin (Origin, else Referer) and carry
 *     the session's CSRF token; either missing is a refusal.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3_600_000;
/** The cookie's name. Without a Domain attribute it is sent back only to the host that set it. */
export const SESSION_COOKIE = 'th_session';

/** A new random secret (a session id or a CSRF token), base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database stores of a session id. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** A presented secret against the expected one, in constant time for equal lengths. */
export function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A cookie value that can be a session id (anything else is not looked up). */
export const looksLikeSecret = (value: string): boolean => SECRET_PATTERN.test(value);

export type SessionVerdict = 'live' | 'idle' | 'expired';

/** Whether a session is still good at `now`: `idle` past the idle limit, `expired` past the absolute one. */
export function sessionVerdict(session: { createdAt: Date; lastSeenAt: Date }, now: Date): SessionVerdict {
  if (now.getTime() - session.createdAt.getTime() >= SESSION_ABSOLUTE_MS) return 'expired';
  if (now.getTime() - session.lastSeenAt.getTime() >= SESSION_IDLE_MS) return 'idle';
  return 'live';
}

/** The last moment the cookie is needed: the absolute end, so the browser drops it by itself then. */
export function cookieMaxAgeS(createdAt: Date, now: Date): number {
  return Math.max(0, Math.floor((createdAt.getTime() + SESSION_ABSOLUTE_MS - now.getTime()) / 1000));
}

/** The Set-Cookie value of a session (`maxAgeS` 0: the cookie's removal at sign-out). */
export function sessionCookieHeader(value: string, options: { secure: boolean; maxAgeS: number }): string {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${options.maxAgeS}`];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** One cookie's value from a Cookie header; undefined when it is absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The console's own origin: the configured public URL's when there is one (behind a TLS proxy the
 * request itself says http and the proxy's address), else the request's scheme and Host.
 */
export function ownOrigin(publicUrl: string | undefined, request: { protocol: string; host: string }): string {
  if (publicUrl !== undefined && publicUrl !== '') return new URL(publicUrl).origin;
  return `${request.protocol}://${request.host}`.toLowerCase();
}

/** Why a state-changing request is refused for where it came from, or null when it came from `origin`. */
export function originRefusal(headers: { origin?: string; referer?: string }, origin: string): string | null {
  if (headers.origin !== undefined) {
    return headers.origin.toLowerCase() === origin ? null : 'the request came from another origin';
  }
  if (headers.referer !== undefined) {
    let from: string;
    try {
      from = new URL(headers.referer).origin;
    } catch {
      return 'the request has an unreadable Referer';
    }
    return from === origin ? null : 'the request came from another origin';
  }
  return 'the request says neither Origin nor Referer';
}
