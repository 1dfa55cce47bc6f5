/**
 * One canary fetch with a real HTTP client (undici), directly or through an HTTP(S) forward proxy, the
 * way production crawlers send traffic: absolute-URI requests for http:// pages and CONNECT tunnels for
 * https:// pages (what most crawler HTTP clients do by default). Bounded in every dimension: a connect
 * timeout, one deadline for the whole exchange (headers and body), and a body cap after which reading
 * stops. Redirects are not followed: a redirect is evidence (a 302 to /captcha is a challenge), and a
 * canary never lands on a host its definition did not name.
 *
 * What it may reach (core/canaries/reach.ts) is enforced here, at fetch time: the URL's host against the
 * canary's site, an IP-address URL against the address rule, and — for direct fetches — every address
 * the host name resolves to, checked in the connection's own DNS lookup (so the address checked is the
 * address connected to; a name that re-resolves to 127.0.0.1 between definition and fetch is caught).
 * Through a proxy, the proxy resolves the name: the host rule still applies, the proxy's own reach is
 * its operator's.
 *
 * Never throws for network trouble: failures come back as a `network-error` outcome in the event
 * schema's vocabulary, so the classifier judges them exactly like production failures. A refused
 * target is a `refused` outcome: our policy, not the site's doing.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, type Dispatcher, ProxyAgent, request } from 'undici';
import type { FetchOutcome } from '../../core/canaries/fetch-outcome';
import { addressReachProblem, type ReachPolicy, urlReachProblem } from '../../core/canaries/reach';
import type { NetworkError } from '@target-health/crawler/events/event';

export type { FetchOutcome } from '../../core/canaries/fetch-outcome';

export interface FetchOptions {
  url: string;
  /** HTTP(S) forward proxy; absent = direct. */
  proxyUrl?: string | undefined;
  userAgent: string;
  /** Deadline for the whole exchange. */
  timeoutMs: number;
  connectTimeoutMs: number;
  maxBodyBytes: number;
  /** Aborts the fetch (e.g. the activity was cancelled). */
  signal?: AbortSignal | undefined;
  /** Extra trusted CA certificates (PEM) for the page and a TLS proxy: private CAs, test servers. */
  ca?: string | undefined;
  /** What canaries may reach, and the canary's site for the host rule (core/canaries/reach.ts). */
  reach: { policy: ReachPolicy; site: string };
}

/** The fetch was not made (or not completed) because the target is outside what canaries may reach. */
export interface FetchRefused {
  kind: 'refused';
  /** One line: what was refused and how an operator allows it. */
  problem: string;
  latencyMs: number;
  viaProxy: boolean;
}

/** Marks the DNS lookup's refusal, so it is told apart from real network errors. */
const REACH_REFUSED = 'ERR_CANARY_REACH_REFUSED';

const ACCEPT = 'text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8';

export async function fetchCanaryPage(options: FetchOptions): Promise<FetchOutcome | FetchRefused> {
  const viaProxy = options.proxyUrl !== undefined;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refusedUrl = urlReachProblem(options.url, options.reach.site, options.reach.policy);
  if (refusedUrl !== undefined) return { kind: 'refused', problem: `url: ${refusedUrl}`, latencyMs: 0, viaProxy };
  const deadline = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    deadline.abort(new Error(`no complete answer within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  const onCancel = () => deadline.abort(new Error('cancelled'));
  if (options.signal?.aborted) onCancel();
  else options.signal?.addEventListener('abort', onCancel, { once: true });
  const dispatcher = makeDispatcher(options);
  try {
    const response = await request(options.url, {
      method: 'GET',
      dispatcher,
      signal: deadline.signal,
      headers: {
        'user-agent': options.userAgent,
        accept: ACCEPT,
        'accept-encoding': 'gzip, deflate, br',
        'accept-language': 'en',
      },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const headers = flattenHeaders(response.headers);
    const decoders = decodersFor(headers['content-encoding']);
    if (decoders === undefined) {
      response.body.destroy();
      return {
        kind: 'network-error',
        networkError: 'other',
        message: `unsupported content-encoding "${headers['content-encoding']}" (we accept gzip, deflate, br)`,
        latencyMs: elapsed(),
        viaProxy,
      };
    }
    // Errors of any stage (a corrupt gzip stream, a reset) surface in the loop below.
    const body = decoders.reduce<Readable>(
      (source, decoder) => pipeline(source, decoder, () => undefined),
      response.body,
    );
    const chunks: Buffer[] = [];
    let read = 0;
    let truncated = false;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = options.maxBodyBytes - read;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        read += room;
        truncated = chunk.length > room;
        break;
      }
      chunks.push(chunk);
      read += chunk.length;
    }
    // Stop reading at the cap: destroying the body closes the connection instead of draining it.
    if (truncated) {
      body.destroy();
      response.body.destroy();
    }
    const declared = Number(headers['content-length']);
    const bytes =
      truncated && decoders.length === 0 && Number.isSafeInteger(declared) && declared > read ? declared : read;
    return {
      kind: 'response',
      status: response.statusCode,
      headers,
      body: decode(Buffer.concat(chunks), headers['content-type']),
      bytes,
      truncated,
      latencyMs: elapsed(),
      viaProxy,
    };
  } catch (err) {
    const refused = reachRefusal(err);
    if (refused !== undefined) return { kind: 'refused', problem: refused, latencyMs: elapsed(), viaProxy };
    const networkError = timedOut ? 'timeout' : networkErrorOf(err, viaProxy);
    const message = timedOut ? `no complete answer within ${options.timeoutMs} ms` : describeError(err);
    return { kind: 'network-error', networkError, message, latencyMs: elapsed(), viaProxy };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCancel);
    // A fresh dispatcher per fetch: canaries must not ride on a connection another canary warmed up.
    await dispatcher.destroy().catch(() => undefined);
  }
}

function makeDispatcher(options: FetchOptions): Dispatcher {
  const tls = { timeout: options.connectTimeoutMs, ...(options.ca !== undefined ? { ca: options.ca } : {}) };
  if (options.proxyUrl === undefined)
    return new Agent({ connect: { ...tls, lookup: guardedLookup(options.reach.policy) } });
  const target = new URL(options.url);
  return new ProxyAgent({
    uri: options.proxyUrl,
    // http:// pages as absolute-URI requests, https:// pages through a CONNECT tunnel.
    proxyTunnel: target.protocol === 'https:',
    proxyTls: tls,
    requestTls: tls,
  });
}

/**
 * A DNS lookup for the page's connection that refuses a name resolving to any address canaries may not
 * reach. Every address is checked (not only the first): the connection may try the others.
 */
function guardedLookup(policy: ReachPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      for (const { address } of addresses) {
        const problem = addressReachProblem(address, policy);
        if (problem !== undefined) {
          callback(Object.assign(new Error(`url: ${hostname} resolves to ${problem}`), { code: REACH_REFUSED }), '', 0);
          return;
        }
      }
      if (options.all) (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** The refusal message when `err` (or a cause) is the guarded lookup's refusal. */
function reachRefusal(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === REACH_REFUSED) return (e as Error).message;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Decoders for a Content-Encoding list (applied in reverse order of listing), or undefined for one we
 * did not offer. Our own zlib streams rather than undici's decompress interceptor, which is still
 * experimental and warns on every process that uses it.
 */
function decodersFor(contentEncoding: string | undefined): Transform[] | undefined {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  const decoders: Transform[] = [];
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') decoders.push(createGunzip());
    else if (coding === 'deflate') decoders.push(createInflate());
    else if (coding === 'br') decoders.push(createBrotliDecompress());
    else return undefined;
  }
  return decoders;
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join('\n') : value;
  }
  return out;
}

function decode(bytes: Buffer, contentType: string | undefined): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      // Unknown label: fall through to UTF-8, which is what most pages are anyway.
    }
  }
  return new TextDecoder('utf-8').decode(bytes);
}

const TLS_CODE = /^(?:ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|UND_ERR_PRX_TLS)/;
const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** The event schema's network error for an undici/Node error (walking `cause` chains). */
export function networkErrorOf(err: unknown, viaProxy: boolean): NetworkError {
  const errors: Array<{ code?: unknown; message?: unknown }> = [];
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    errors.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  const codes = errors.map((e) => (typeof e.code === 'string' ? e.code : ''));
  const messages = errors.map((e) => (typeof e.message === 'string' ? e.message : '')).join(' ');
  if (
    codes.some(
      (c) =>
        c === 'UND_ERR_CONNECT_TIMEOUT' ||
        c === 'UND_ERR_HEADERS_TIMEOUT' ||
        c === 'UND_ERR_BODY_TIMEOUT' ||
        c === 'ETIMEDOUT',
    )
  )
    return 'timeout';
  if (/Proxy response \(\d+\)|Proxy Authentication Required/i.test(messages)) return 'proxy';
  // Through a proxy every TCP connection goes to the proxy itself: failing to reach it is a route problem.
  if (viaProxy && codes.some((c) => CONNECT_CODES.has(c))) return 'proxy';
  if (codes.some((c) => TLS_CODE.test(c))) return 'tls';
  if (codes.some((c) => c === 'ENOTFOUND' || c === 'EAI_AGAIN')) return 'dns';
  if (codes.some((c) => c === 'ECONNRESET' || c === 'EPIPE' || c === 'UND_ERR_SOCKET')) return 'connection_reset';
  return 'other';
}

function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    const text = e.message || e.name;
    parts.push(code !== undefined && !text.includes(code) ? `${code}: ${text}` : text);
    e = e.cause;
  }
  const joined = [...new Set(parts)].join(' ← ');
  return joined.length > 300 ? `${joined.slice(0, 299)}…` : joined || String(err);
}
