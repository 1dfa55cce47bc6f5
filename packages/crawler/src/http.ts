/**
 * HTTP requests for the API sink and the controls stream, on `node:http`/`node:https`.
 *
 * Not `fetch`: Crawlee 3 runs on Node.js 16, which has no global fetch (it came in 18), and undici would be
 * a dependency of its own. What the two callers need is small: a request with headers and a body, an
 * AbortSignal that ends it at any point (before the answer, or mid-stream), the answer's status and
 * headers, and its body as text (capped) or as a stream of chunks.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Buffer;
  signal: AbortSignal;
  /** Keep-alive agents of the caller (one per sink: connections are reused batch after batch). */
  agents?: HttpAgents;
}

export interface HttpAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

/** Agents keeping connections open between requests, as fetch does. */
export function keepAliveAgents(): HttpAgents {
  return { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
}

/** The answer: status, headers (lower-case names) and the body still to be read. */
export interface HttpAnswer {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  /** The body as chunks; ends with an error when the request is aborted mid-stream. */
  body: IncomingMessage;
}

/** Sends the request; resolves when the answer's headers arrive, rejects on a network error or abort. */
export function send(url: URL, req: HttpRequest): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    if (req.signal.aborted) {
      reject(abortError());
      return;
    }
    const https = url.protocol === 'https:';
    const headers =
      req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(req.body.length) };
    const agent: HttpAgent | undefined =
      req.agents === undefined ? undefined : https ? req.agents.https : req.agents.http;
    const options = { method: req.method, headers, signal: req.signal, ...(agent !== undefined && { agent }) };
    const onAnswer = (res: IncomingMessage) =>
      resolve({
        status: res.statusCode ?? 0,
        statusText: res.statusMessage ?? '',
        header: (name) => {
          const v = res.headers[name.toLowerCase()];
          return Array.isArray(v) ? v.join(', ') : v;
        },
        body: res,
      });
    const r = (https ? httpsRequest : httpRequest)(url, options, onAnswer);
    r.on('error', reject);
    r.end(req.body);
  });
}

/** The body as text, at most `maxBytes` of it (an API answer is small; a wrong address may not be). */
export async function textOf(answer: HttpAnswer, maxBytes = 1 << 20): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    if (bytes + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - bytes));
      answer.body.destroy();
      break;
    }
    chunks.push(chunk);
    bytes += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Drops the rest of a body we do not read (so a keep-alive socket is freed, or closed). */
export function discard(answer: HttpAnswer): void {
  answer.body.resume();
}

function abortError(): Error {
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  return err;
}
