/**
 * Fixtures of the Crawlee adapter's integration tests: a small site on loopback that answers for any
 * host name (`/ok`, `/challenge` = a 403 challenge page, `/bare403` = a 403 without type or body, `/error` = 500,
 * `/reset` = socket destroyed, `?delay=ms`; other paths 404, uncounted), counting hits and the most requests in flight
 * per host; a forward proxy (CONNECT and absolute-form) that sends every host to that site, so a crawl can use real
 * host names and proxy user names (`http://residential-de:x@127.0.0.1:port`); an in-memory EventSink; a ControlsView
 * held in a map; and a Crawlee Configuration that keeps nothing on disk.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration } from '@crawlee/core';
import type { ControlsView, SiteControls } from '@target-health/crawler/controls/types';
import type { EventSink, RecordedBatch } from '@target-health/crawler/recorder/recorder';

export const CHALLENGE_BODY = `<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<div id="challenge-running">Checking if the site connection is secure</div>
<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script></body></html>`;

export interface HostCounts {
  hits: number;
  inFlight: number;
  maxInFlight: number;
}

export interface TestSite {
  port: number;
  counts(host: string): HostCounts;
  /** When each counted request to the host arrived (Date.now() on the site, oldest first). */
  arrivals(host: string): number[];
  close(): Promise<void>;
}

const hostOf = (header: string | undefined) => (header ?? '').replace(/:\d+$/, '').toLowerCase();

export async function startTestSite(): Promise<TestSite> {
  const perHost = new Map<string, HostCounts>();
  const arrivals = new Map<string, number[]>();
  const countsOf = (host: string) => {
    let c = perHost.get(host);
    if (!c) perHost.set(host, (c = { hits: 0, inFlight: 0, maxInFlight: 0 }));
    return c;
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const kind = url.pathname.split('/')[1];
    if (!['ok', 'challenge', 'error', 'reset', 'bare403'].includes(kind ?? '')) {
      // What a browser fetches besides the page (favicon, the challenge page's script): not a crawl request.
      res.writeHead(404).end();
      return;
    }
    const host = hostOf(req.headers.host);
    if (!arrivals.has(host)) arrivals.set(host, []);
    arrivals.get(host)!.push(Date.now());
    const c = countsOf(host);
    c.hits += 1;
    c.inFlight += 1;
    c.maxInFlight = Math.max(c.maxInFlight, c.inFlight);
    let done = false;
    const finish = () => {
      if (!done) c.inFlight -= 1;
      done = true;
    };
    res.on('close', finish);
    const delay = Number(url.searchParams.get('delay') ?? 0);
    setTimeout(() => {
      if (kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (kind === 'challenge') {
        res.writeHead(403, {
          'content-type': 'text/html; charset=utf-8',
          'cf-mitigated': 'challenge',
          server: 'cloudflare',
        });
        res.end(CHALLENGE_BODY);
        return;
      }
      if (kind === 'bare403') {
        // A wall as many are: 403, no Content-Type, no body.
        res.writeHead(403, { server: 'nginx', 'content-length': '0' });
        res.end();
        return;
      }
      if (kind === 'error') {
        res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<html><head><title>Oops</title></head><body>backend exploded ${'x'.repeat(300)}</body></html>`);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<html><head><title>Product ${url.pathname}</title></head><body><h1 class="name">Item</h1><span ` +
          `class="price">9.99</span>${'<p>filler</p>'.repeat(50)}</body></html>`,
      );
    }, delay);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    counts: (host) => ({ ...countsOf(host) }),
    arrivals: (host) => [...(arrivals.get(host) ?? [])],
    close: () => closeServer(server),
  };
}

export interface TestProxy {
  port: number;
  /** The proxy URL with a user name (the route label vendors use): `http://residential-de:x@127.0.0.1:port`. */
  url(userName: string): string;
  close(): Promise<void>;
}

/** A forward proxy to the test site: CONNECT tunnels and absolute-form requests alike. */
export async function startTestProxy(sitePort: number): Promise<TestProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/');
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: sitePort,
        method: req.method,
        path: target.pathname + target.search,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (_req, client: Socket, head: Buffer) => {
    const upstream = connect(sitePort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    upstream.on('error', end).on('close', end);
    client.on('error', end).on('close', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (userName) => `http://${userName}:x@127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    },
  };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** An EventSink that keeps what it is given (the collaborator of the recorder under test). */
export function memorySink(): EventSink & { events: Record<string, unknown>[] } {
  const events: Record<string, unknown>[] = [];
  return {
    events,
    write(batch: RecordedBatch) {
      events.push(...batch.events);
      return Promise.resolve({
        accepted: batch.events.length,
        inserted: batch.events.length,
        duplicates: 0,
        rejected: [],
      });
    },
  };
}

/** A ControlsView over a map, changed by the test. */
export function memoryControls(): ControlsView & { set(site: string, change: Partial<SiteControls>): void } {
  const records = new Map<string, SiteControls>();
  const listeners = new Set<(c: SiteControls) => void>();
  return {
    controlsFor: (site) => records.get(site.toLowerCase().replace(/\.$/, '')),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(site, change) {
      const before = records.get(site);
      const next: SiteControls = {
        site,
        concurrencyLimit: 8,
        revisitMultiplier: 1,
        paused: false,
        canaryOnly: false,
        effectiveCostMultiplier: 1,
        band: 'healthy',
        reason: 'test',
        updatedAt: new Date().toISOString(),
        ...before,
        ...change,
        version: (before?.version ?? 0) + 1,
      };
      records.set(site, next);
      for (const l of listeners) l(next);
    },
  };
}

/** A Crawlee configuration that persists nothing (and a temp dir for what it might still write). */
export function scratchConfiguration(): { config: Configuration; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'th-crawlee-'));
  const config = new Configuration({
    persistStorage: false,
    purgeOnStart: true,
    storageClientOptions: { localDataDirectory: dir },
  });
  return { config, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Resolves when `check()` holds (checked every 20 ms), or fails after `ms` naming `what`. */
export async function waitFor(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
