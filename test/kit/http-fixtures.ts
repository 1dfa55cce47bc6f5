/**
 * Real local HTTP machinery for canary tests, written with node:http (no mocks): a page server (HTTP or
 * HTTPS, on 127.0.0.1 and a random port) and a forward proxy that speaks both ways production proxies
 * are used — absolute-URI requests (`GET http://host/path`) and CONNECT tunnels — and records what it
 * saw, so a test can prove a canary really travelled through it.
 */
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A self-signed certificate for localhost / 127.0.0.1, valid until 2126, for HTTPS fixtures only.
 * The private key is public on purpose: it protects nothing but test traffic on the loopback interface.
 */
export const TEST_TLS = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgMBfeZlx/TCOXRdxd
nc4FB/jc60co44ZmntGOa6GBFKihRANCAAQhYsTDnkwEagHOGKJQeGAgwQ6sL9Ia
OwtV3QU2eFY86mNeOs/AJyWNMprfp9D1eecexR6hNR2Y+J9FXq9ZtT7s
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIULa34WQtLBWMWKJzGIMJfoP75OVAwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEzMDAwNTUzNVoYDzIxMjYxMTA2
MDA1NTM1WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQhYsTDnkwEagHOGKJQeGAgwQ6sL9IaOwtV3QU2eFY86mNeOs/AJyWN
Mprfp9D1eecexR6hNR2Y+J9FXq9ZtT7so28wbTAdBgNVHQ4EFgQUHIKz+gwAhH8w
Wwb62pvIsurJclcwHwYDVR0jBBgwFoAUHIKz+gwAhH8wWwb62pvIsurJclcwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSAAwRQIgMPTYEbBLBXN/nAPTPNVc21G52kERdqTZS5Sc+NN8q3QCIQCa
lLyXoodocGwp3dRZmWLwAtr+yD69oOOcPCosyPAsGw==
-----END CERTIFICATE-----
`,
};

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface SeenRequest {
  method: string;
  /** Path (page server), absolute URI or host:port of a CONNECT (proxy). */
  target: string;
  headers: IncomingMessage['headers'];
}

export interface FixtureServer {
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  port: number;
  requests: SeenRequest[];
  /** Requests whose path (without query) is `path`. */
  hits(path: string): number;
  close(): Promise<void>;
}

/** Tracks sockets so close() never waits for a slow handler or a kept-alive connection. */
function trackSockets(server: net.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

async function listen(server: net.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: net.Server, sockets: Set<Socket>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const socket of sockets) socket.destroy();
  await closed;
}

/** A page server; unknown paths get 404. `tls: true` serves HTTPS with {@link TEST_TLS}. */
export async function startFixtureServer(
  routes: Record<string, Handler>,
  options: { tls?: boolean } = {},
): Promise<FixtureServer> {
  const requests: SeenRequest[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push({ method: req.method ?? 'GET', target: req.url ?? '/', headers: req.headers });
    const route = routes[path];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    Promise.resolve(route(req, res)).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  };
  const server = options.tls
    ? https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, handle)
    : http.createServer(handle);
  const sockets = trackSockets(server);
  const port = await listen(server);
  return {
    origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    hits: (path) => requests.filter((r) => r.target.split('?')[0] === path).length,
    close: () => closeServer(server, sockets),
  };
}

export interface ForwardProxy {
  /** http://127.0.0.1:port, or with credentials when the proxy requires them. */
  url: string;
  port: number;
  /** Every request the proxy received: absolute-URI requests and CONNECTs. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A forward proxy. With `auth`, requests without the matching Proxy-Authorization get 407. Upstream
 * failures become 502, like a real proxy.
 */
export async function startForwardProxy(
  options: { auth?: { user: string; password: string } } = {},
): Promise<ForwardProxy> {
  const seen: SeenRequest[] = [];
  const upstreams = new Set<Socket>();
  const expected = options.auth
    ? `Basic ${Buffer.from(`${options.auth.user}:${options.auth.password}`).toString('base64')}`
    : undefined;
  const authorised = (req: IncomingMessage) =>
    expected === undefined || req.headers['proxy-authorization'] === expected;

  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? 'GET', target: req.url ?? '', headers: req.headers });
    if (!authorised(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('a forward proxy needs an absolute URI');
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request(
      // agent: false — one upstream connection per request, closed with it (no pooled sockets to track).
      {
        host: target.hostname,
        port: target.port || 80,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
        agent: false,
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstream.on('socket', (s: Socket) => {
      upstreams.add(s);
      s.once('close', () => upstreams.delete(s));
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
      else res.destroy();
    });
    // The page server may reset the connection; the client must see that as a reset too.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push({ method: 'CONNECT', target: req.url ?? '', headers: req.headers });
    if (!authorised(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    const [host = '', port = '443'] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstreams.add(upstream);
    upstream.once('close', () => {
      upstreams.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    client.on('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
  });

  const sockets = trackSockets(server);
  const port = await listen(server);
  const credentials = options.auth
    ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.password)}@`
    : '';
  return {
    url: `http://${credentials}127.0.0.1:${port}`,
    port,
    seen,
    close: async () => {
      for (const s of upstreams) s.destroy();
      await closeServer(server, sockets);
    },
  };
}

/** Handlers for common fixture answers. */
export const answer = {
  html:
    (body: string, status = 200, headers: Record<string, string> = {}): Handler =>
    (_req, res) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
    },
  json:
    (value: unknown, status = 200): Handler =>
    (_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    },
  redirect:
    (location: string, status = 302): Handler =>
    (_req, res) => {
      res.writeHead(status, { location }).end();
    },
  /**
   * Answers after `delayMs` (longer than the canary timeout in the tests that use it). The timer is
   * cleared when the client gives up, so closing the server never waits for it.
   */
  slow:
    (body: string, delayMs: number): Handler =>
    (req, res) => {
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(body), delayMs);
      req.socket.once('close', () => clearTimeout(timer));
    },
  /** Drops the connection without an answer (what some protections do to crawlers). */
  reset: (): Handler => (req) => {
    // A TCP reset where the socket allows it; TLS sockets cannot send one, so they just close.
    try {
      req.socket.resetAndDestroy();
    } catch {
      req.socket.destroy();
    }
  },
};

/**
 * Fixture pages for canaries, from test/fixtures/pages. The product page is padded with reviews to a
 * realistic size: the fixture alone (4.4 KB) is below the classifier's short-page threshold, where its
 * invisible reCAPTCHA v3 script would (rightly) count as a corroborated challenge marker.
 */
export function fixturePage(name: string): string {
  return readFileSync(join(__dirname, '..', 'fixtures', 'pages', name), 'utf8');
}

export const KNOWN_PRICE = '$139.95';

export function productPage(price = KNOWN_PRICE): string {
  const reviews = Array.from(
    { length: 60 },
    (_, i) =>
      `<article class="review"><strong>Review ${i + 1}</strong><p>Comfortable on long runs, good grip on wet ` +
      `rock, true to size.</p></article>`,
  ).join('\n');
  return fixturePage('product-page.html')
    .replace('$139.95', price)
    .replace('</main>', `<section class="more-reviews">\n${reviews}\n</section>\n</main>`);
}
