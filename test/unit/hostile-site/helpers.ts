/**
 * Real HTTP clients for the hostile-site tests (node:http, no agent pooling so nothing outlives a test):
 * a direct request to the site with a Host header, a request through a forward proxy in absolute form
 * (what Crawlee/got and Scrapy send for plain-http targets), and the event a crawler would record.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import { load } from 'cheerio';
import type { ClassifiableEvent } from '@target-health/crawler/events';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function collect(req: http.ClientRequest, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** GET (or another method) straight to the site, choosing the virtual host by the Host header. */
export function direct(
  port: number,
  host: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Answer> {
  return collect(http.request({ host: '127.0.0.1', port, path, method, agent: false, headers: { host, ...headers } }));
}

/** A request to the site's own address (the admin endpoint). */
export function admin(port: number, method: string, path: string, json?: unknown, rawBody?: string): Promise<Answer> {
  const body = rawBody ?? (json === undefined ? undefined : JSON.stringify(json));
  const headers: Record<string, string> =
    body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
  return collect(http.request({ host: '127.0.0.1', port, path, method, agent: false, headers }), body);
}

/** GET `url` through the forward proxy at `proxyUrl`, in absolute form, with the proxy credentials of the URL. */
export function viaProxy(proxyUrl: string, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const proxy = new URL(proxyUrl);
  const target = new URL(url);
  const auth =
    proxy.username === ''
      ? {}
      : { 'proxy-authorization': `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')}` };
  return collect(
    http.request({
      host: proxy.hostname,
      port: Number(proxy.port),
      path: url,
      agent: false,
      headers: { host: target.host, ...auth, ...headers },
    }),
  );
}

export function json<T>(answer: Answer): T {
  return JSON.parse(answer.body) as T;
}

/** The response as a crawler's recorder reports it: status, single-valued headers, the body, its size. */
export function eventOf(answer: Answer, extra: Partial<ClassifiableEvent> = {}): ClassifiableEvent {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join('\n') : value;
  return { status: answer.status, headers, bodySample: answer.body, bytes: Buffer.byteLength(answer.body), ...extra };
}

/** What a crawler's extraction finds on a page: its `article.product` items with a name and a price. */
export function extract(body: string): { records: number; links: string[] } {
  const $ = load(body);
  const records = $('article.product').filter(
    (_, el) => $(el).find('.name').text() !== '' && $(el).find('.price').attr('data-price') !== undefined,
  ).length;
  const links = $('a[href]')
    .map((_, el) => $(el).attr('href') ?? '')
    .get();
  return { records, links };
}
