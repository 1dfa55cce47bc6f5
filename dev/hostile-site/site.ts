/**
 * The hostile site: one HTTP server on 127.0.0.1 serving several virtual hosts, chosen by the Host
 * header (`shop.hostile.test`, `news.hostile.test`…; reached through the forward proxies of proxy.ts,
 * which resolve them to this server). Each host serves a small catalogue (catalogue.ts) and can turn
 * hostile at run time — challenges, soft blocks, a 403 wall, slowness, a ramp of those over time, and
 * blocks of one proxy route only — while an access log records what was served to whom.
 *
 * Control: programmatically (the returned object) or over HTTP on the same server (admin.ts), for the
 * demo and the Python tests. Time comes from an injectable clock (ramps and the log use it; the
 * latency of slow answers is real time, since crawlers measure it).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { DEFAULT_CANARY_USER_AGENT } from '../../server/canary-runner/settings';
import { renderPage, type ChallengeKind, type HardKind } from '../../core/scenarios/pages';
import { hashText, mixSeed, Rng } from '../../core/scenarios/rng';
import {
  AccessLog,
  DEFAULT_MAX_ENTRIES,
  summarize,
  type AccessLogEntry,
  type LogQuery,
  type LogSummary,
  type Rate,
  type ServedKind,
} from './access-log';
import { handleAdmin, type ProxyControl } from './admin';
import {
  listingPage,
  pageTypeOf,
  renderCatalogue,
  THEMES,
  type CatalogueOptions,
  type Page,
  type Theme,
} from './catalogue';
import {
  DEFAULT_PAGES,
  HostModeSchema,
  latencyOf,
  modeAt,
  NORMAL,
  rampDone,
  RampSchema,
  scheduleRamp,
  type HostMode,
  type Protection,
  type RampStep,
  type ScheduledRamp,
  type SoftPage,
} from './modes';
import { closeServer, listenLoopback, SocketSet } from './sockets';

/** The route label of a request that came through no labelling proxy. */
export const DIRECT_ROUTE = 'direct';
/** Header a forward proxy adds to name its route. */
export const ROUTE_HEADER = 'x-th-route';
/** Header (value `1`) or query parameter (`th-canary=1`) marking a canary fetch. */
export const CANARY_HEADER = 'x-th-canary';
export const CANARY_QUERY = 'th-canary';

export interface HostConfig {
  /** Host name, e.g. `shop.hostile.test` (lower-case). */
  name: string;
  /** A built-in theme name (`shop`, `news`, `travel`, `books`) or a theme object. Default: `shop`. */
  theme?: string | Theme;
  /** The vendor in front of the host: its normal-page scripts and default refusal pages. Default `cloudflare`. */
  protection?: Protection;
  /** Item pages /item/1…items. Default 200. */
  items?: number;
  /** Items per listing page. Default 20. */
  perPage?: number;
  /** Starting mode. Default normal. */
  mode?: HostMode;
}

export const DEFAULT_HOSTS: readonly HostConfig[] = [
  { name: 'shop.hostile.test', theme: 'shop', protection: 'cloudflare' },
  { name: 'news.hostile.test', theme: 'news', protection: 'datadome' },
  { name: 'travel.hostile.test', theme: 'travel', protection: 'perimeterx' },
  { name: 'calm.hostile.test', theme: 'books', protection: 'akamai' },
];

export interface HostileSiteOptions {
  hosts?: readonly HostConfig[];
  /** Port to listen on (127.0.0.1); 0 (default) picks a free one. */
  port?: number;
  /** Milliseconds since the epoch; default Date.now. Ramps, the log and rates read it. */
  clock?: () => number;
  /** Seed of the draws (which request of a share is refused, which vendor page). Default 1. */
  seed?: number;
  /** User-agent prefixes of canary fetches. Default: Target Health's canary runner's (`target-health-canary/`). */
  canaryUserAgents?: readonly string[];
  /** Access-log entries kept per host. */
  maxLogEntries?: number;
  logger?: Logger;
}

export interface HostState {
  host: string;
  mode: HostMode;
  /** The ramp still in progress, if any. */
  ramp: { startedAt: number; steps: readonly RampStep[] } | undefined;
  /** Route label → the wall page it gets. */
  blockedRoutes: Record<string, HardKind>;
  protection: Protection;
}

export interface HostileSite {
  /** http://127.0.0.1:port — the admin endpoint lives here. */
  origin: string;
  port: number;
  hosts: readonly string[];
  /** `http://<host><path>`: the URL a crawler requests through a proxy. */
  urlOf(host: string, path?: string): string;
  /** Sets a host's mode now (and cancels its ramp). */
  setMode(host: string, mode: HostMode): void;
  /** The mode in force now. */
  modeOf(host: string): HostMode;
  /** Schedules modes from now on: each step applies `afterMs` after this call (cancels an earlier ramp). */
  turnHostile(ramp: { host: string; steps: readonly RampStep[] }): void;
  /** Refuses every request of one proxy route to the host with a 403 wall page (default: the host's). */
  blockRoute(host: string, route: string, page?: HardKind): void;
  unblockRoute(host: string, route: string): void;
  state(host: string): HostState;
  log(host: string, query?: LogQuery): AccessLogEntry[];
  /** Requests of the last `windowMs` (by the site's clock). */
  rate(host: string, windowMs: number, query?: Omit<LogQuery, 'since'>): Rate;
  summary(host: string, query?: LogQuery): LogSummary;
  /** Entries dropped from a host's bounded log. */
  dropped(host: string): number;
  /** Lets the admin endpoint kill and revive these proxies (the world does this). */
  attachProxies(proxies: readonly ProxyControl[]): void;
  close(): Promise<void>;
}

/** Thrown for a call naming a host the site does not serve, or an invalid mode or ramp. */
export class HostileSiteError extends Error {
  override name = 'HostileSiteError';
}

interface Host {
  catalogue: CatalogueOptions;
  protection: Protection;
  mode: HostMode;
  ramp: { scheduled: ScheduledRamp; before: HostMode } | undefined;
  blockedRoutes: Map<string, HardKind>;
  log: AccessLog;
}

const SCENARIO_PAGE_TYPE = { home: 'listing', listing: 'listing', product: 'product', robots: 'listing' } as const;

/** `target-health-canary/`: the product token of the canary runner's default user agent, any version. */
export function canaryUserAgentPrefix(): string {
  const slash = DEFAULT_CANARY_USER_AGENT.indexOf('/');
  return slash === -1 ? DEFAULT_CANARY_USER_AGENT : DEFAULT_CANARY_USER_AGENT.slice(0, slash + 1);
}

/** The host name of a Host header: lower-case, without port; undefined when absent. */
export function hostOfHeader(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const lower = value.trim().toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.lastIndexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new HostileSiteError(formatIssues(parsed.error, { prefix: what }));
}

export async function startHostileSite(options: HostileSiteOptions = {}): Promise<HostileSite> {
  const clock = options.clock ?? Date.now;
  const rng = new Rng(mixSeed(options.seed ?? 1, hashText('hostile-site')));
  const canaryPrefixes = (options.canaryUserAgents ?? [canaryUserAgentPrefix()]).map((p) => p.toLowerCase());
  const hosts = new Map<string, Host>();
  for (const config of options.hosts ?? DEFAULT_HOSTS) {
    const name = config.name.toLowerCase();
    if (hosts.has(name)) throw new HostileSiteError(`hosts: "${name}" is listed twice`);
    const themeName = typeof config.theme === 'object' ? undefined : (config.theme ?? 'shop');
    const theme =
      typeof config.theme === 'object'
        ? config.theme
        : Object.hasOwn(THEMES, themeName ?? 'shop')
          ? THEMES[themeName ?? 'shop']
          : undefined;
    if (theme === undefined)
      throw new HostileSiteError(
        `hosts: theme "${themeName}" of ${name} is unknown; use one of ${Object.keys(THEMES).join(', ')}`,
      );
    const protection = config.protection ?? 'cloudflare';
    hosts.set(name, {
      catalogue: { host: name, theme, protection, items: config.items ?? 200, perPage: config.perPage ?? 20 },
      protection,
      mode: config.mode === undefined ? NORMAL : parseOrThrow(HostModeSchema, config.mode, 'mode'),
      ramp: undefined,
      blockedRoutes: new Map(),
      log: new AccessLog(options.maxLogEntries ?? DEFAULT_MAX_ENTRIES),
    });
  }

  const hostOf = (name: string): Host => {
    const host = hosts.get(name.toLowerCase());
    if (!host)
      throw new HostileSiteError(`host: unknown host "${name}"; this site serves ${[...hosts.keys()].join(', ')}`);
    return host;
  };

  /** The mode in force now; a finished ramp is folded into the plain mode. */
  const currentMode = (host: Host): HostMode => {
    if (host.ramp === undefined) return host.mode;
    const now = clock();
    const mode = modeAt(host.ramp.scheduled, host.ramp.before, now);
    if (rampDone(host.ramp.scheduled, now)) {
      host.mode = mode;
      host.ramp = undefined;
    }
    return mode;
  };

  const pendingTimers = new Set<NodeJS.Timeout>();
  const sockets = new SocketSet();
  let proxies: readonly ProxyControl[] = [];

  const site: HostileSite = {
    origin: '',
    port: 0,
    hosts: [...hosts.keys()],
    urlOf: (host, path = '/') => `http://${hostOf(host).catalogue.host}${path}`,
    setMode(name, mode) {
      const host = hostOf(name);
      host.mode = parseOrThrow(HostModeSchema, mode, 'mode');
      host.ramp = undefined;
      options.logger?.info({ host: host.catalogue.host, mode: host.mode }, 'hostile site: mode set');
    },
    modeOf: (name) => currentMode(hostOf(name)),
    turnHostile({ host: name, steps }) {
      const host = hostOf(name);
      const ramp = parseOrThrow(RampSchema, { steps }, 'ramp');
      const before = currentMode(host);
      host.mode = before;
      host.ramp = { scheduled: scheduleRamp(ramp.steps, clock()), before };
      options.logger?.info({ host: host.catalogue.host, steps: ramp.steps }, 'hostile site: ramp started');
    },
    blockRoute(name, route, page) {
      const host = hostOf(name);
      host.blockedRoutes.set(route, page ?? DEFAULT_PAGES[host.protection].wall);
    },
    unblockRoute(name, route) {
      hostOf(name).blockedRoutes.delete(route);
    },
    state(name) {
      const host = hostOf(name);
      const mode = currentMode(host);
      return {
        host: host.catalogue.host,
        mode,
        ramp:
          host.ramp === undefined
            ? undefined
            : { startedAt: host.ramp.scheduled.startedAt, steps: host.ramp.scheduled.steps },
        blockedRoutes: Object.fromEntries(host.blockedRoutes),
        protection: host.protection,
      };
    },
    log: (name, filter) => hostOf(name).log.find(filter),
    rate: (name, windowMs, filter) => hostOf(name).log.rate(clock(), windowMs, filter),
    summary: (name, filter) => summarize(hostOf(name).log.find(filter)),
    dropped: (name) => hostOf(name).log.dropped,
    attachProxies(list) {
      proxies = list;
    },
    close: async () => {
      for (const timer of pendingTimers) clearTimeout(timer);
      pendingTimers.clear();
      await closeServer(server, sockets);
    },
  };

  const isCanary = (req: IncomingMessage, url: URL): boolean => {
    if (req.headers[CANARY_HEADER] === '1' || url.searchParams.get(CANARY_QUERY) === '1') return true;
    const ua = (req.headers['user-agent'] ?? '').toLowerCase();
    return canaryPrefixes.some((p) => ua.startsWith(p));
  };

  /** Decides the answer for one request to a known host: a page, a refusal, or a reset. */
  const decide = (
    host: Host,
    mode: HostMode,
    route: string,
    path: string,
    now: number,
  ): { served: ServedKind; page?: string; answer: Page | 'reset' } => {
    const pageType = pageTypeOf(host.catalogue, path);
    const context = {
      host: host.catalogue.host,
      pageType: SCENARIO_PAGE_TYPE[pageType ?? 'listing'],
      path,
      country: 'DE',
      ts: now,
    };
    const refusal = (kind: HardKind, served: ServedKind) => {
      if (kind === 'connection-reset') return { served: 'reset' as const, page: kind, answer: 'reset' as const };
      const r = renderPage(kind, rng, context);
      return { served, page: kind, answer: fromScenario(r.status ?? 403, r.headers, r.bodySample) };
    };
    const blocked = host.blockedRoutes.get(route);
    if (blocked !== undefined) return refusal(blocked, 'route-block');
    if (mode.kind === 'wall') return refusal(mode.page ?? DEFAULT_PAGES[host.protection].wall, 'wall');
    const challenge = (pages: readonly ChallengeKind[] | undefined) => {
      const kind = rng.pick(pages ?? [DEFAULT_PAGES[host.protection].challenge]);
      const r = renderPage(kind, rng, context);
      return {
        served: 'challenge' as const,
        page: kind,
        answer: fromScenario(r.status ?? 403, r.headers, r.bodySample),
      };
    };
    const softBlock = (pages: readonly SoftPage[] | undefined) => {
      const kind = rng.pick(pages ?? [DEFAULT_PAGES[host.protection].soft]);
      if (kind === 'empty-records')
        return { served: 'soft-block' as const, page: kind, answer: listingPage(host.catalogue, 1, true) };
      const r = renderPage(kind, rng, context);
      return {
        served: 'soft-block' as const,
        page: kind,
        answer: fromScenario(r.status ?? 200, r.headers, r.bodySample),
      };
    };
    // robots.txt is content-free: share-based protections leave it alone (a wall does not).
    if (pageType !== 'robots') {
      if (mode.kind === 'challenging' && rng.chance(mode.share)) return challenge(mode.pages);
      if (mode.kind === 'soft-block' && rng.chance(mode.share)) return softBlock(mode.pages);
      if (mode.kind === 'mixed') {
        // One draw: [0, challengeShare) a challenge, then [.., + softShare) a soft block, else the page.
        const u = rng.next();
        if (u < mode.challengeShare) return challenge(mode.challengePages);
        if (u < mode.challengeShare + mode.softShare) return softBlock(mode.softPages);
      }
    }
    const page = renderCatalogue(host.catalogue, path);
    return { served: page.status === 404 ? 'not-found' : page.pageType === 'robots' ? 'robots' : 'page', answer: page };
  };

  const serveHost = (host: Host, req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const now = clock();
    const mode = currentMode(host);
    const routeHeader = req.headers[ROUTE_HEADER];
    const route = typeof routeHeader === 'string' && routeHeader !== '' ? routeHeader : DIRECT_ROUTE;
    const { served, page, answer } = decide(host, mode, route, url.pathname, now);
    const latencyMs = latencyOf(mode);
    host.log.add({
      ts: now,
      method: req.method ?? 'GET',
      path: `${url.pathname}${url.search}`,
      status: answer === 'reset' ? 0 : answer.status,
      served,
      ...(page === undefined ? {} : { page }),
      mode: mode.kind,
      route,
      canary: isCanary(req, url),
      userAgent: req.headers['user-agent'] ?? '',
      latencyMs,
    });
    const send = (): void => {
      if (answer === 'reset') {
        req.socket.resetAndDestroy();
        return;
      }
      const body = req.method === 'HEAD' ? '' : answer.body;
      res.writeHead(answer.status, {
        ...answer.headers,
        'content-length': Buffer.byteLength(answer.body),
        'cache-control': 'no-store',
      });
      res.end(body);
    };
    if (latencyMs <= 0) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      pendingTimers.delete(timer);
      if (!res.destroyed) send();
    }, latencyMs);
    pendingTimers.add(timer);
  };

  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://placeholder');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request target');
      return;
    }
    const hostName = hostOfHeader(req.headers.host);
    const host = hostName === undefined ? undefined : hosts.get(hostName);
    if (host) {
      serveHost(host, req, res, url);
      return;
    }
    // The admin endpoint answers on the server's own address only, never on a virtual host.
    if (url.pathname.startsWith('/_admin/')) {
      handleAdmin(req, res, url, { site, proxies: () => proxies, clock });
      return;
    }
    res
      .writeHead(421, { 'content-type': 'text/plain' })
      .end(`this server serves ${[...hosts.keys()].join(', ')} (Host header) and /_admin/ on its own address\n`);
  });
  server.on('connection', (socket) => sockets.track(socket));
  // A crawler's abrupt disconnect is normal traffic here, not an error to crash on.
  server.on('clientError', (_err, socket) => socket.destroy());

  const port = await listenLoopback(server, options.port ?? 0);
  site.port = port;
  site.origin = `http://127.0.0.1:${port}`;
  return site;
}

/** A scenario page as served: its headers without a stale content-length (the server sets its own). */
function fromScenario(status: number, headers: Record<string, string> | undefined, body: string | undefined): Page {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (name !== 'content-length') out[name] = value;
  return { status, pageType: undefined, headers: out, body: body ?? '' };
}
