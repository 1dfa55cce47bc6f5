/**
 * Route labels → proxy URLs. The mapping lives in the environment (TARGET_HEALTH_ROUTES, a JSON object),
 * not in a table: proxy URLs usually carry credentials, and secrets belong in the deployment's secret
 * store, not in rows that `canary list`, backups and every read-only user can see. A canary stores the
 * label, so rotating a proxy password is a config change, never a data migration.
 */
import { checkProxyUrl, proxyEndpoint, redactProxyUrl } from './proxy-url';

/** Same alphabet as route pool labels in events, so a label can double as the event's `route.pool`. */
export const ROUTE_LABEL = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
export const ROUTE_LABEL_HELP = '1-64 letters, digits and . _ : / - (e.g. "residential-de")';

export type RouteTable = ReadonlyMap<string, string>;

export type RouteTableResult = { ok: true; table: RouteTable } | { ok: false; problem: string };

const EXAMPLE = '{"residential-de": "http://user:password@gw.proxy.example:8000"}';

export function parseRouteTable(raw: string | undefined): RouteTableResult {
  if (raw === undefined || raw.trim() === '') return { ok: true, table: new Map() };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return {
      ok: false,
      problem: `must be a JSON object of route label → proxy URL like ${EXAMPLE} (it is not valid JSON)`,
    };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, problem: `must be a JSON object of route label → proxy URL like ${EXAMPLE}` };
  }
  const table = new Map<string, string>();
  for (const [label, value] of Object.entries(json)) {
    if (!ROUTE_LABEL.test(label))
      return { ok: false, problem: `label ${JSON.stringify(label)} must be ${ROUTE_LABEL_HELP}` };
    if (typeof value !== 'string')
      return { ok: false, problem: `label "${label}": the proxy URL must be a string like "http://host:port"` };
    const check = checkProxyUrl(value);
    if (!check.ok) return { ok: false, problem: `label "${label}": ${check.problem}` };
    table.set(label, check.url);
  }
  return { ok: true, table };
}

/** Labels with redacted URLs, for listings and error hints. */
export function describeRoutes(table: RouteTable): string[] {
  return [...table].map(([label, url]) => `${label} → ${redactProxyUrl(url)}`);
}

export type ResolvedRoute =
  | { ok: true; proxyUrl: string | undefined; shown: string; pool: string | undefined }
  | { ok: false; shown: string; problem: string };

/**
 * The proxy a canary uses right now: its route label looked up in `table`, its own proxy URL, or none
 * (direct). `shown` never carries credentials; `pool` is the event's `route.pool`, so the signal store
 * splits canary traffic by route like production traffic.
 */
export function resolveRoute(
  definition: { route?: string | undefined; proxy?: string | undefined },
  table: RouteTable,
): ResolvedRoute {
  if (definition.route !== undefined) {
    const proxyUrl = table.get(definition.route);
    const shown = `route ${definition.route}`;
    if (proxyUrl === undefined) {
      return {
        ok: false,
        shown,
        problem:
          `route label "${definition.route}" is not in TARGET_HEALTH_ROUTES on this worker; add it there (the ` +
          `CLI and the worker need the same value) or change the canary's route`,
      };
    }
    return { ok: true, proxyUrl, shown, pool: definition.route };
  }
  if (definition.proxy !== undefined) {
    const endpoint = proxyEndpoint(definition.proxy);
    return {
      ok: true,
      proxyUrl: definition.proxy,
      shown: `proxy ${endpoint}`,
      pool: ROUTE_LABEL.test(endpoint) ? endpoint : undefined,
    };
  }
  return { ok: true, proxyUrl: undefined, shown: 'direct', pool: undefined };
}
