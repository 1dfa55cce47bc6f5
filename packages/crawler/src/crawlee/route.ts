/**
 * The event's `route` from Crawlee's `proxyInfo`: proxy vendors encode the pool and the country in the
 * proxy URL's user name (`residential-de`, `customer-acme-zone-residential-country-de-session-abc`,
 * `user-x-cc-DE`), so that is read first; without one the proxy's host:port names the pool, which is
 * enough to tell one route from another.
 */
import type { Route } from '../events/event';

/** What the adapter reads of Crawlee's ProxyInfo (a structural subset, so any 3.x version fits). */
export interface ProxyInfoLike {
  url?: string;
  username?: string;
  hostname?: string;
  port?: number | string;
}

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const COUNTRY = /^[A-Za-z]{2}$/;
/** Vendor keys whose next token is the value: `zone-residential`, `country-de`, `cc-DE`, `session-x`. */
const POOL_KEYS = new Set(['pool', 'zone']);
const COUNTRY_KEYS = new Set(['country', 'cc', 'region']);
const SESSION_KEYS = new Set(['session', 'sessid', 'sid']);

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function userNameOf(proxy: ProxyInfoLike): string | undefined {
  if (proxy.username) return safeDecode(proxy.username);
  if (!proxy.url) return undefined;
  try {
    const u = new URL(proxy.url);
    return u.username ? safeDecode(u.username) : undefined;
  } catch {
    return undefined;
  }
}

function hostPortOf(proxy: ProxyInfoLike): string | undefined {
  if (proxy.hostname)
    return proxy.port !== undefined && proxy.port !== '' ? `${proxy.hostname}:${proxy.port}` : proxy.hostname;
  if (!proxy.url) return undefined;
  try {
    const u = new URL(proxy.url);
    return u.port ? `${u.hostname}:${u.port}` : u.hostname;
  } catch {
    return undefined;
  }
}

/** Parses a proxy user name; fields it cannot read are left out (never a bad label). */
export function routeFromUserName(userName: string): Route {
  const tokens = userName.split(/[-_]/).filter((t) => t !== '');
  const route: { pool?: string; country?: string; session?: string } = {};
  const keyed = tokens.some((t) => POOL_KEYS.has(t.toLowerCase()) || COUNTRY_KEYS.has(t.toLowerCase()));
  if (keyed) {
    for (let i = 0; i < tokens.length - 1; i++) {
      const key = tokens[i]!.toLowerCase();
      const value = tokens[i + 1]!;
      if (POOL_KEYS.has(key) && route.pool === undefined && LABEL.test(value)) route.pool = value;
      else if (COUNTRY_KEYS.has(key) && route.country === undefined && COUNTRY.test(value))
        route.country = value.toUpperCase();
      else if (SESSION_KEYS.has(key)) route.session = 'sticky';
    }
    return route;
  }
  // The short form `pool-country` (`residential-de`, `dc-us`): a trailing two-letter token is the country.
  const last = tokens[tokens.length - 1];
  if (tokens.length >= 2 && last !== undefined && COUNTRY.test(last)) {
    route.country = last.toUpperCase();
    const pool = tokens.slice(0, -1).join('-');
    if (LABEL.test(pool)) route.pool = pool;
  } else if (LABEL.test(userName)) {
    route.pool = userName;
  }
  return route;
}

/** The route of a request sent through `proxy` ({} without a proxy: the crawler's own address). */
export function routeFromProxyInfo(proxy: ProxyInfoLike | undefined): Route {
  if (!proxy) return {};
  const userName = userNameOf(proxy);
  const route = userName ? routeFromUserName(userName) : {};
  if (route.pool === undefined) {
    const hostPort = hostPortOf(proxy);
    if (hostPort !== undefined && LABEL.test(hostPort)) return { ...route, pool: hostPort };
  }
  return route;
}
