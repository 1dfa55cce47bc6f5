/**
 * The labelled forward proxies of the hostile world, with real clients on loopback: absolute-form
 * requests and CONNECT tunnels reach the right virtual host and carry the route label; a killed route
 * gives network errors and comes back; a route block refuses only that route.
 */
import http from 'node:http';
import net from 'node:net';
import { startHostileWorld, type HostileWorld } from '../../../dev/hostile-site/world';
import { startForwardProxy } from '../../../dev/hostile-site/proxy';
import { admin, json, viaProxy } from './helpers';

const SHOP = 'shop.hostile.test';
const NEWS = 'news.hostile.test';

let world: HostileWorld;
beforeAll(async () => {
  world = await startHostileWorld();
});
afterAll(async () => {
  await world.close();
});
beforeEach(async () => {
  for (const p of world.proxies) await p.revive();
  for (const host of world.site.hosts) {
    world.site.setMode(host, { kind: 'normal' });
    for (const route of Object.keys(world.site.state(host).blockedRoutes)) world.site.unblockRoute(host, route);
  }
});

/**
 * A raw CONNECT, then one plain-HTTP request inside the tunnel; resolves with the CONNECT status line and the inner
 * answer.
 */
function throughTunnel(
  proxyPort: number,
  authority: string,
  host: string,
  path: string,
): Promise<{ connect: string; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxyPort, '127.0.0.1');
    let buffer = '';
    let connect: string | undefined;
    socket.on('data', (d: Buffer) => {
      buffer += d.toString('latin1');
      if (connect === undefined) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) return;
        connect = buffer.slice(0, buffer.indexOf('\r\n'));
        buffer = buffer.slice(end + 4);
        if (!connect.includes(' 200 ')) {
          socket.destroy();
          resolve({ connect, answer: '' });
          return;
        }
        socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      }
    });
    socket.on('end', () => resolve({ connect: connect ?? '', answer: buffer }));
    socket.on('error', reject);
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

describe('forwarding', () => {
  it('exposes each route with its label as the proxy username', () => {
    expect(world.proxies.map((p) => p.label)).toEqual(['dc-de', 'dc-us', 'resi-fr']);
    for (const p of world.proxies) expect(p.url).toBe(`http://${p.label}:x@127.0.0.1:${p.port}`);
  });

  it('an absolute-form request reaches the named host and carries its route label and address', async () => {
    const since = Date.now();
    const shop = await viaProxy(world.proxy('dc-de').url, world.site.urlOf(SHOP, '/item/3'), {
      'user-agent': 'got (https://github.com/sindresorhus/got)',
    });
    const news = await viaProxy(world.proxy('resi-fr').url, world.site.urlOf(NEWS, '/item/3'));
    expect(shop.status).toBe(200);
    expect(shop.body).toContain('Northwind Outdoor');
    expect(news.body).toContain('The Daily Ledger');
    expect(world.site.log(SHOP, { since }).map((e) => [e.path, e.route, e.userAgent])).toEqual([
      ['/item/3', 'dc-de', 'got (https://github.com/sindresorhus/got)'],
    ]);
    expect(world.site.log(NEWS, { since }).map((e) => [e.path, e.route])).toEqual([['/item/3', 'resi-fr']]);
  });

  it('gives each route its own x-forwarded-for and strips the proxy credentials', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const origin = http.createServer((req, res) => {
      seen.push(req.headers);
      res.end('ok');
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    const port = (origin.address() as net.AddressInfo).port;
    const a = await startForwardProxy({ label: 'dc-de', target: port });
    const b = await startForwardProxy({ label: 'dc-us', target: port, clientIp: '203.0.113.9' });
    try {
      await viaProxy(a.url, 'http://x.hostile.test/');
      await viaProxy(b.url, 'http://x.hostile.test/');
      expect(seen.map((h) => [h.host, h['x-th-route'], h['proxy-authorization']])).toEqual([
        ['x.hostile.test', 'dc-de', undefined],
        ['x.hostile.test', 'dc-us', undefined],
      ]);
      expect(seen[0]!['x-forwarded-for']).toMatch(/^198\.51\.100\.\d+$/);
      expect(seen[1]!['x-forwarded-for']).toBe('203.0.113.9');
    } finally {
      await Promise.all([a.close(), b.close(), new Promise((r) => origin.close(r))]);
    }
  });

  it('answers CONNECT and carries the route label on requests inside the tunnel', async () => {
    const since = Date.now();
    const proxy = world.proxy('dc-us');
    const { connect, answer } = await throughTunnel(proxy.port, `${SHOP}:80`, SHOP, '/list/2');
    expect(connect).toBe('HTTP/1.1 200 Connection Established');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain('page 2 of 10');
    expect(world.site.log(SHOP, { since }).map((e) => [e.path, e.route])).toEqual([['/list/2', 'dc-us']]);
  });

  it('refuses destinations outside the hostile site and loopback', async () => {
    const answer = await viaProxy(world.proxy('dc-de').url, 'http://example.com/');
    expect(answer.status).toBe(502);
    expect(answer.headers['x-th-proxy-error']).toBe('destination not allowed');
    const { connect } = await throughTunnel(world.proxy('dc-de').port, 'example.com:443', 'example.com', '/');
    expect(connect).toBe('HTTP/1.1 502 Bad Gateway');
  });

  it('passes a reset by the site on to the client as a reset', async () => {
    world.site.setMode(SHOP, { kind: 'wall', page: 'connection-reset' });
    await expect(viaProxy(world.proxy('dc-de').url, world.site.urlOf(SHOP, '/item/1'))).rejects.toMatchObject({
      code: 'ECONNRESET',
    });
  });
});

describe('a route that dies', () => {
  it('kill("refuse"): connections are refused; revive() brings the route back on the same URL', async () => {
    const proxy = world.proxy('dc-de');
    const url = world.site.urlOf(SHOP, '/item/5');
    await proxy.kill('refuse');
    expect(proxy.state).toBe('refuse');
    await expect(viaProxy(proxy.url, url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Other routes are untouched.
    expect((await viaProxy(world.proxy('dc-us').url, url)).status).toBe(200);
    await proxy.revive();
    expect(proxy.state).toBe('up');
    expect((await viaProxy(proxy.url, url)).status).toBe(200);
  });

  it('kill("reset"): every connection is reset ("socket hang up" / ECONNRESET); revive() works', async () => {
    const proxy = world.proxy('resi-fr');
    const url = world.site.urlOf(NEWS, '/item/5');
    await proxy.kill('reset');
    await expect(viaProxy(proxy.url, url)).rejects.toMatchObject({
      code: expect.stringMatching(/^(ECONNRESET|EPIPE)$/),
    });
    await proxy.revive();
    expect((await viaProxy(proxy.url, url)).status).toBe(200);
  });

  it('a kill drops requests already in flight through the route', async () => {
    const proxy = world.proxy('dc-us');
    world.site.setMode(SHOP, { kind: 'slow', latencyMs: 30_000 });
    const since = Date.now();
    const pending = viaProxy(proxy.url, world.site.urlOf(SHOP, '/item/6'));
    while (world.site.log(SHOP, { since }).length === 0) await new Promise((r) => setImmediate(r));
    await proxy.kill('reset');
    await expect(pending).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('can be killed and revived through the admin endpoint', async () => {
    const off = await admin(world.site.port, 'POST', '/_admin/proxies/dc-de', { state: 'refuse' });
    expect(json<{ state: string }>(off).state).toBe('refuse');
    await expect(viaProxy(world.proxy('dc-de').url, world.site.urlOf(SHOP, '/'))).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    const listed = json<{ proxies: { label: string; state: string }[] }>(
      await admin(world.site.port, 'GET', '/_admin/proxies'),
    );
    expect(listed.proxies.map((p) => [p.label, p.state])).toEqual([
      ['dc-de', 'refuse'],
      ['dc-us', 'up'],
      ['resi-fr', 'up'],
    ]);
    await admin(world.site.port, 'POST', '/_admin/proxies/dc-de', { state: 'up' });
    expect((await viaProxy(world.proxy('dc-de').url, world.site.urlOf(SHOP, '/'))).status).toBe(200);
    const bad = await admin(world.site.port, 'POST', '/_admin/proxies/dc-de', { state: 'dead' });
    expect([bad.status, json<{ error: string }>(bad).error]).toEqual([400, expect.stringMatching(/^state: /)]);
    expect((await admin(world.site.port, 'POST', '/_admin/proxies/nope', { state: 'up' })).status).toBe(404);
  });
});

describe('route blocks', () => {
  it('blockRoute refuses only requests that came through that route', async () => {
    world.site.blockRoute(SHOP, 'dc-us');
    const since = Date.now();
    const url = world.site.urlOf(SHOP, '/item/12');
    const blocked = await viaProxy(world.proxy('dc-us').url, url);
    expect(blocked.status).toBe(403);
    expect(blocked.body).toContain('Sorry, you have been blocked');
    expect((await viaProxy(world.proxy('dc-de').url, url)).status).toBe(200);
    expect((await viaProxy(world.proxy('resi-fr').url, url)).status).toBe(200);
    // Other hosts through the same route are not blocked.
    expect((await viaProxy(world.proxy('dc-us').url, world.site.urlOf(NEWS, '/item/12'))).status).toBe(200);
    expect(world.site.log(SHOP, { since }).map((e) => [e.route, e.served])).toEqual([
      ['dc-us', 'route-block'],
      ['dc-de', 'page'],
      ['resi-fr', 'page'],
    ]);
    world.site.unblockRoute(SHOP, 'dc-us');
    expect((await viaProxy(world.proxy('dc-us').url, url)).status).toBe(200);
  });
});

describe('closing', () => {
  it('a world closes with kept-alive client connections open', async () => {
    const own = await startHostileWorld({ routes: [{ label: 'only' }] });
    const agent = new http.Agent({ keepAlive: true });
    const proxy = new URL(own.proxy('only').url);
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(
          {
            host: '127.0.0.1',
            port: Number(proxy.port),
            path: own.site.urlOf('shop.hostile.test', '/'),
            agent,
            headers: { host: 'shop.hostile.test' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        )
        .on('error', reject);
    });
    expect(status).toBe(200);
    await own.close();
    agent.destroy();
  });
});
