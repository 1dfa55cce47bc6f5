/**
 * The hostile site's admin endpoint, on the site's own address (`http://127.0.0.1:port/_admin/…`, never
 * on a virtual host), so the demo and the Python tests drive the site the way the TypeScript tests do
 * through the returned object. Every body and query is validated with zod; a mistake is a 400 whose
 * `error` names the field (`share: …`), and nothing is changed.
 *
 *   GET  /_admin/hosts                                  every host's state
 *   POST /_admin/hosts/{host}/mode          {"kind": "challenging", "share": 0.3}
 *   POST /_admin/hosts/{host}/ramp          {"steps": [{"afterMs": 0, "mode": {...}}, …]}
 *   POST /_admin/hosts/{host}/blocked-routes {"route": "dc-de", "blocked": true, "page"?: "cloudflare-block"}
 *   GET  /_admin/log?host=&since=&route=&canary=       {"host", "dropped", "entries": [...]}
 *   GET  /_admin/summary?host=&since=&route=&canary=   counts by status, served kind, route
 *   GET  /_admin/rate?host=&windowMs=&route=&canary=   {"count", "windowMs", "perSecond"}
 *   GET  /_admin/proxies                                the world's proxies and their state
 *   POST /_admin/proxies/{label}            {"state": "up" | "refuse" | "reset"}
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { HARD_KINDS } from '../../core/scenarios/pages';
import { expecting, formatIssues } from '@target-health/crawler/events/zod-issues';
import { HostModeSchema, RampSchema } from './modes';
import type { ProxyControl } from './proxy';
import type { HostileSite } from './site';

export type { ProxyControl };

const MAX_BODY_BYTES = 64 * 1024;

const BlockedRouteSchema = z.strictObject({
  route: z
    .string(expecting('a route label like "dc-de"'))
    .min(1, expecting('a route label like "dc-de"'))
    .max(64, expecting('a route label of at most 64 characters')),
  blocked: z.boolean(expecting('true to block the route, false to unblock it')).default(true),
  page: z.enum(HARD_KINDS, expecting(`one of ${HARD_KINDS.join(', ')}`)).optional(),
});

const ProxyStateSchema = z.strictObject({
  state: z.enum(
    ['up', 'refuse', 'reset'],
    expecting('"up" (revive), "refuse" (connections refused) or "reset" (connections reset)'),
  ),
});

const msQuery = (what: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, expecting(`${what} (an integer number of milliseconds)`))
    .transform(Number);
const canaryQuery = z.enum(['true', 'false'], expecting('true or false')).transform((v) => v === 'true');
const LogQuerySchema = z.strictObject({
  host: z
    .string(expecting('a host name like shop.hostile.test'))
    .min(1, expecting('a host name like shop.hostile.test')),
  since: msQuery('a time in ms since the epoch').optional(),
  route: z.string().min(1, expecting('a route label like "dc-de"')).optional(),
  canary: canaryQuery.optional(),
});
const RateQuerySchema = z.strictObject({
  host: z
    .string(expecting('a host name like shop.hostile.test'))
    .min(1, expecting('a host name like shop.hostile.test')),
  windowMs: msQuery('a window length'),
  route: z.string().min(1, expecting('a route label like "dc-de"')).optional(),
  canary: canaryQuery.optional(),
});

export interface AdminContext {
  site: HostileSite;
  proxies: () => readonly ProxyControl[];
  clock: () => number;
}

class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, root: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AdminError(400, formatIssues(parsed.error, { root }));
  return parsed.data;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new AdminError(413, `body: larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new AdminError(400, 'body: empty; send a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AdminError(400, 'body: not valid JSON');
  }
}

function hostParam(ctx: AdminContext, raw: string): string {
  const host = decodeURIComponent(raw).toLowerCase();
  if (!ctx.site.hosts.includes(host))
    throw new AdminError(
      404,
      `host: unknown host "${host.slice(0, 80)}"; this site serves ${ctx.site.hosts.join(', ')}`,
    );
  return host;
}

async function route(req: IncomingMessage, url: URL, ctx: AdminContext): Promise<{ status: number; body: unknown }> {
  const { site } = ctx;
  const parts = url.pathname.split('/').filter((p) => p !== '');
  // parts[0] is "_admin".
  const method = req.method ?? 'GET';
  const query = Object.fromEntries(url.searchParams);
  const [, resource, id, action] = parts;

  if (resource === 'hosts' && id === undefined && method === 'GET') {
    return { status: 200, body: { now: ctx.clock(), hosts: site.hosts.map((h) => site.state(h)) } };
  }
  if (resource === 'hosts' && id !== undefined && parts.length === 4 && method === 'POST') {
    const host = hostParam(ctx, id);
    if (action === 'mode') {
      site.setMode(host, parse(HostModeSchema, await readJson(req), 'body'));
      return { status: 200, body: site.state(host) };
    }
    if (action === 'ramp') {
      const ramp = parse(RampSchema, await readJson(req), 'body');
      site.turnHostile({ host, steps: ramp.steps });
      return { status: 200, body: site.state(host) };
    }
    if (action === 'blocked-routes') {
      const block = parse(BlockedRouteSchema, await readJson(req), 'body');
      if (block.blocked) site.blockRoute(host, block.route, block.page);
      else site.unblockRoute(host, block.route);
      return { status: 200, body: site.state(host) };
    }
  }
  if ((resource === 'log' || resource === 'summary') && parts.length === 2 && method === 'GET') {
    const q = parse(LogQuerySchema, query, 'query');
    const host = hostParam(ctx, q.host);
    const filter = { since: q.since, route: q.route, canary: q.canary };
    if (resource === 'summary') return { status: 200, body: { host, ...site.summary(host, filter) } };
    return { status: 200, body: { host, dropped: site.dropped(host), entries: site.log(host, filter) } };
  }
  if (resource === 'rate' && parts.length === 2 && method === 'GET') {
    const q = parse(RateQuerySchema, query, 'query');
    const host = hostParam(ctx, q.host);
    return { status: 200, body: { host, ...site.rate(host, q.windowMs, { route: q.route, canary: q.canary }) } };
  }
  if (resource === 'proxies' && parts.length === 2 && method === 'GET') {
    return {
      status: 200,
      body: { proxies: ctx.proxies().map((p) => ({ label: p.label, url: p.url, state: p.state })) },
    };
  }
  if (resource === 'proxies' && id !== undefined && parts.length === 3 && method === 'POST') {
    const label = decodeURIComponent(id);
    const proxy = ctx.proxies().find((p) => p.label === label);
    if (!proxy)
      throw new AdminError(
        404,
        `label: unknown proxy "${label.slice(0, 80)}"; known: ${
          ctx
            .proxies()
            .map((p) => p.label)
            .join(', ') || '(none attached)'
        }`,
      );
    const { state } = parse(ProxyStateSchema, await readJson(req), 'body');
    if (state === 'up') await proxy.revive();
    else await proxy.kill(state);
    return { status: 200, body: { label: proxy.label, url: proxy.url, state: proxy.state } };
  }
  throw new AdminError(
    404,
    `path: no admin endpoint ${method} ${url.pathname.slice(0, 120)} (see docs/crawlers-hostile-site.md)`,
  );
}

export function handleAdmin(req: IncomingMessage, res: ServerResponse, url: URL, ctx: AdminContext): void {
  route(req, url, ctx).then(
    ({ status, body }) => sendJson(res, status, body),
    (err: unknown) => {
      if (err instanceof AdminError) sendJson(res, err.status, { error: err.message });
      else sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
    },
  );
}
