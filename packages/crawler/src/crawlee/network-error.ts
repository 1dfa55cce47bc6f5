/**
 * Maps the errors a request can end with in Crawlee (got-scraping for Http/Cheerio, Playwright's
 * `net::ERR_*` for browsers, Node socket codes underneath) to the event's `networkError` enum.
 * Only messages and codes are read: the error classes differ per crawler and per version.
 */
import type { NetworkError } from '../events/event';

interface Rule {
  kind: NetworkError;
  pattern: RegExp;
}

// First match wins: a proxy that resets the tunnel is a proxy problem, not the site resetting us, and a
// TLS failure reported as "socket disconnected before secure TLS connection" is TLS, not a reset.
const RULES: readonly Rule[] = [
  { kind: 'proxy', pattern: /proxy|ERR_TUNNEL_CONNECTION_FAILED|\b407\b/i },
  {
    kind: 'tls',
    pattern:
      /\b(?:TLS|SSL)\b|certificate|ERR_TLS_|ERR_SSL_|ERR_CERT_|EPROTO|CERT_HAS_EXPIRED|SELF_SIGNED|UNABLE_TO_VERIFY/i,
  },
  {
    kind: 'dns',
    pattern: /ENOTFOUND|EAI_AGAIN|EAI_FAIL|getaddrinfo|ERR_NAME_NOT_RESOLVED|ERR_NAME_RESOLUTION_FAILED/i,
  },
  {
    kind: 'timeout',
    pattern: /ETIMEDOUT|ESOCKETTIMEDOUT|timed? ?out|TimeoutError|ERR_TIMED_OUT|ERR_CONNECTION_TIMED_OUT/i,
  },
  {
    kind: 'connection_reset',
    pattern: new RegExp(
      [
        'ECONNRESET',
        'socket hang up',
        'EPIPE',
        'ERR_CONNECTION_RESET',
        'ERR_CONNECTION_CLOSED',
        'ERR_EMPTY_RESPONSE',
        'other side closed',
        'premature close',
      ].join('|'),
      'i',
    ),
  },
];

/** The text to match: the error's code, name and message, and those of its cause (got wraps socket errors). */
function describe(err: unknown, depth = 0): string {
  if (err === null || err === undefined || depth > 3) return '';
  if (typeof err !== 'object') return typeof err === 'string' ? err : '';
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  const parts = [e.code, e.name, e.message].filter((p): p is string => typeof p === 'string');
  return `${parts.join(' ')} ${describe(e.cause, depth + 1)}`;
}

const TLS = RULES.find((r) => r.kind === 'tls')!.pattern;

/**
 * Failing to connect at all. Through a proxy every TCP connection goes to the proxy itself, so this is
 * the proxy refusing or unreachable — a dead route (the same rule as the canary runner's fetch).
 */
const CONNECT_FAILED = /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ERR_PROXY_CONNECTION_FAILED|ERR_CONNECTION_REFUSED/i;

/**
 * The `networkError` for an error that ended a request before any HTTP response arrived. `viaProxy`:
 * the request went through a proxy (a connection refused is then the proxy's).
 */
export function networkErrorOf(err: unknown, viaProxy = false): NetworkError {
  const text = describe(err);
  if (viaProxy && CONNECT_FAILED.test(text) && !TLS.test(text)) return 'proxy';
  for (const rule of RULES) if (rule.pattern.test(text)) return rule.kind;
  return 'other';
}
