/**
 * A labelled HTTP forward proxy on 127.0.0.1, one per "route" of the hostile world (`dc-de`, `dc-us`,
 * `resi-fr`): it takes absolute-form requests (`GET http://shop.hostile.test/item/3 HTTP/1.1`, what
 * got/Crawlee, Scrapy and Chromium send for plain-http targets through a proxy) and CONNECT tunnels,
 * resolves every `*.hostile.test` to the hostile site's port (no DNS), and tells the site which route the
 * request took (`x-th-route: <label>`, and a per-route `x-forwarded-for`).
 *
 * A route can die: `kill('refuse')` closes the listener (clients get ECONNREFUSED), `kill('reset')`
 * keeps it open and resets every connection (ECONNRESET, "socket hang up"); both drop the connections in
 * flight. `revive()` brings it back on the same port.
 *
 * It reaches nothing but the hostile site and loopback: a test fixture must not be an open proxy.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { hashText } from '../../core/scenarios/rng';
import { closeServer, listenLoopback, SocketSet } from './sockets';
import { ROUTE_HEADER } from './site';

export type ProxyState = 'up' | 'refuse' | 'reset';

/** What the admin endpoint needs to kill and revive a route. */
export interface ProxyControl {
  readonly label: string;
  readonly url: string;
  readonly state: ProxyState;
  kill(how?: 'refuse' | 'reset'): Promise<void>;
  revive(): Promise<void>;
}

export interface ForwardProxyOptions {
  /** The route label: sent as `x-th-route` and used as the username of `url`. Letters, digits, `.`, `_`, `-`. */
  label: string;
  /** The hostile site (or its port on 127.0.0.1) that `*.<suffix>` hosts resolve to. */
  target: number | { port: number };
  /** Host names ending in this resolve to the target. Default `.hostile.test`. */
  suffix?: string;
  /** The client address the site sees (`x-forwarded-for`); default one of 198.51.100.0/24 derived from the label. */
  clientIp?: string;
  port?: number;
  logger?: Logger;
}

export interface ForwardProxy extends ProxyControl {
  port: number;
  /** `http://<label>:x@127.0.0.1:<port>` — the label as the username, as proxy vendors do. */
  readonly url: string;
  /** Requests forwarded (absolute-form and inside tunnels) and tunnels opened. */
  readonly stats: { forwarded: number; tunnels: number; refusedDestinations: number };
  close(): Promise<void>;
}

export class ForwardProxyError extends Error {
  override name = 'ForwardProxyError';
}

const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export async function startForwardProxy(options: ForwardProxyOptions): Promise<ForwardProxy> {
  if (!LABEL.test(options.label))
    throw new ForwardProxyError(
      `label: "${options.label.slice(0, 80)}" must be 1-64 letters, digits, ".", "_" or "-" (e.g. "dc-de")`,
    );
  const label = options.label;
  const targetPort = typeof options.target === 'number' ? options.target : options.target.port;
  const suffix = (options.suffix ?? '.hostile.test').toLowerCase();
  const clientIp = options.clientIp ?? `198.51.100.${1 + (hashText(label) % 254)}`;
  const sockets = new SocketSet();
  // Our own connections to the site: dropped with the route when it dies.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const stats = { forwarded: 0, tunnels: 0, refusedDestinations: 0 };
  let state: ProxyState = 'up';
  // The authority each CONNECT tunnel was opened to: it decides where the tunnelled requests go.
  const tunnelAuthority = new WeakMap<Socket, { host: string; port: number }>();

  /** Where a host goes: the site for `*.suffix`, loopback as is; undefined: not allowed. */
  const resolve = (host: string, port: number): { port: number } | undefined => {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (name.endsWith(suffix) || name === suffix.replace(/^\./, '')) return { port: targetPort };
    if (name === '127.0.0.1' || name === 'localhost' || name === '[::1]') return { port };
    return undefined;
  };

  const refuseDestination = (res: ServerResponse, host: string): void => {
    stats.refusedDestinations++;
    const body = `this proxy only reaches *${suffix} and loopback, not ${host.slice(0, 80)}\n`;
    res
      .writeHead(502, {
        'content-type': 'text/plain',
        'x-th-proxy-error': 'destination not allowed',
        'content-length': Buffer.byteLength(body),
      })
      .end(body);
  };

  /** Forwards one request to `host` (its Host header) on the resolved port, adding the route headers. */
  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    host: string,
    hostHeader: string,
    port: number,
    path: string,
  ): void => {
    const to = resolve(host, port);
    if (to === undefined) {
      refuseDestination(res, host);
      return;
    }
    stats.forwarded++;
    const headers = {
      ...endToEnd(req.headers),
      host: hostHeader,
      [ROUTE_HEADER]: label,
      'x-forwarded-for': clientIp,
      via: `1.1 th-proxy-${label}`,
    };
    const upstream = http.request(
      { host: '127.0.0.1', port: to.port, method: req.method, path, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // A reset by the site reaches the client as a reset (what a crawler behind a real proxy sees when the
      // site's protection drops it); anything else is the proxy's own failure, said as a 502.
      if (err.code === 'ECONNRESET' || res.headersSent) {
        if (!req.socket.destroyed) req.socket.resetAndDestroy();
        return;
      }
      const body = `proxy ${label}: upstream failed (${err.code ?? err.message})\n`;
      res
        .writeHead(502, {
          'content-type': 'text/plain',
          'x-th-proxy-error': 'upstream failed',
          'content-length': Buffer.byteLength(body),
        })
        .end(body);
    });
    req.pipe(upstream);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const tunnel = tunnelAuthority.get(req.socket);
    if (tunnel) {
      // Inside a CONNECT tunnel: origin-form requests, going where the tunnel was opened to.
      forward(req, res, tunnel.host, req.headers.host ?? tunnel.host, tunnel.port, req.url ?? '/');
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      const body = 'this is a forward proxy: send absolute-form requests (GET http://host/path) or CONNECT\n';
      res.writeHead(400, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    if (url.protocol !== 'http:') {
      refuseDestination(res, url.protocol);
      return;
    }
    forward(req, res, url.hostname, url.host, url.port === '' ? 80 : Number(url.port), `${url.pathname}${url.search}`);
  };

  const server = http.createServer(onRequest);
  // Parses the plain HTTP spoken inside CONNECT tunnels (never listens itself).
  const tunnelServer = http.createServer(onRequest);
  tunnelServer.on('clientError', (_err, socket) => socket.destroy());

  server.on('connection', (socket: Socket) => {
    if (state === 'reset') {
      socket.resetAndDestroy();
      return;
    }
    sockets.track(socket);
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const authority = req.url ?? '';
    const match = /^([^:[\]]+|\[[^\]]+\]):(\d{1,5})$/.exec(authority);
    const to = match ? resolve(match[1]!, Number(match[2])) : undefined;
    if (!match || to === undefined) {
      stats.refusedDestinations++;
      socket.end(`HTTP/1.1 502 Bad Gateway\r\nx-th-proxy-error: destination not allowed\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    stats.tunnels++;
    tunnelAuthority.set(socket, { host: match[1]!, port: Number(match[2]) });
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    tunnelServer.emit('connection', socket);
  });

  let port = await listenLoopback(server, options.port ?? 0);
  const url = `http://${label}:x@127.0.0.1:${port}`;

  const dropConnections = (reset: boolean): void => {
    sockets.destroyAll(reset);
    agent.destroy();
  };

  const proxy: ForwardProxy = {
    label,
    port,
    url,
    get state() {
      return state;
    },
    stats,
    async kill(how = 'refuse') {
      if (state === how) return;
      if (how === 'refuse') {
        state = 'refuse';
        if (server.listening) await closeServer(server, sockets);
        agent.destroy();
      } else {
        if (state === 'refuse') port = await listenLoopback(server, port);
        state = 'reset';
        dropConnections(true);
      }
      options.logger?.warn({ route: label, how }, 'hostile world: proxy route killed');
    },
    async revive() {
      if (state === 'up') return;
      if (!server.listening) port = await listenLoopback(server, port);
      state = 'up';
      options.logger?.info({ route: label }, 'hostile world: proxy route revived');
    },
    async close() {
      state = 'refuse';
      await closeServer(server, sockets);
      agent.destroy();
    },
  };
  return proxy;
}
