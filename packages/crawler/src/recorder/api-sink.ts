/**
 * A recorder sink posting batches to the HTTP API (`POST /v1/events`, docs/api.md "Events in"), for a
 * crawler that has an API token rather than the database's address.
 *
 * - Each batch goes as NDJSON (gzip-compressed by default), split into several requests when it is larger
 *   than `maxBodyBytes` (events with 64 KB body samples add up), with the recorder's event ids applied to
 *   events that have none, so a resent batch is stored once.
 * - The answer becomes the recorder's IngestResult: refused lines (`rejected[{index, errors}]`, also in a
 *   400 `invalid_events`) go to `onRejected` with the API's messages.
 * - Everything that may pass — no connection, a timeout, 429, 503 and other 5xx — is an error the recorder
 *   retries (with the wait of `Retry-After`). 401/403 (a wrong, revoked or under-scoped token) and 404 (a
 *   wrong apiUrl) are retried too, so nothing is lost while someone fixes the token — but logged as errors
 *   at once and every minute: a crawler must not run for hours on a revoked token quietly.
 * - 413 and other 400s say the data is at fault: permanent, so the recorder splits the batch to find the
 *   event at fault. An event that cannot be written as JSON (a BigInt, a cycle) is refused here.
 */
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import * as z from '../zod';
import { keepAliveAgents, send as sendRequest, textOf } from '../http';
import type { IngestResult, RejectedLine } from './types';
import type { EventSink, RecordedBatch } from './recorder';
import { defaultRecorderLogger, describeError, type RecorderLogger } from './report';

const gzip = promisify(gzipCallback);

export interface ApiSinkConfig {
  /** The API's base URL, e.g. `http://127.0.0.1:8787` (process.env.TH_API). */
  apiUrl: string;
  /** A token with the `ingest` scope (`target-health token create crawler-eu --scope ingest`). */
  token: string;
  /** Compress request bodies (true): NDJSON with HTML samples shrinks about tenfold. */
  gzip?: boolean;
  /**
   * Uncompressed bytes per request at most (8 MiB; the API takes 32 MiB by default): larger batches are sent in parts.
   */
  maxBodyBytes?: number;
  /** A request with no answer within this is abandoned and retried (60 s). */
  timeoutMs?: number;
  /** Where token and address problems are logged (a pino logger fits); default: JSON lines on stderr. */
  logger?: RecorderLogger;
}

export interface ApiSink extends EventSink {
  /** Abandons requests still in flight. */
  close(): Promise<void>;
}

/** What the API answered when it was not a result: the status, its error code, and whether a retry can help. */
export class ApiSinkError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when no answer arrived. */
    readonly status: number,
    /** The API's error code (`store_unavailable`, `too_large`…), or ours (`network`, `timeout`). */
    readonly code: string,
    /** The data is at fault: the recorder splits the batch instead of retrying it. */
    readonly permanent: boolean,
    /** From `Retry-After`: the recorder waits at least this long before the next attempt. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ApiSinkError';
  }
}

const resultSchema = z.object({
  accepted: z.number().int().min(0),
  inserted: z.number().int().min(0),
  duplicates: z.number().int().min(0),
  rejected: z.array(z.object({ index: z.number().int().min(0), errors: z.array(z.string()) })),
});
const errorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** One request's worth of a batch: its NDJSON lines and the batch position of each. */
interface Part {
  lines: string[];
  positions: number[];
  bytes: number;
}

function checkConfig(config: ApiSinkConfig): { url: string; token: string } {
  if (typeof config !== 'object' || config === null) throw new Error('apiSink: pass { apiUrl, token }');
  let url: URL;
  try {
    url = new URL(config.apiUrl);
  } catch {
    throw new Error(
      `apiSink: apiUrl: must be the API's base URL like http://127.0.0.1:8787 (got ${JSON.stringify(config.apiUrl)})`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`apiSink: apiUrl: must start with http:// or https:// (got ${JSON.stringify(config.apiUrl)})`);
  if (typeof config.token !== 'string' || config.token.trim() === '') {
    throw new Error(
      'apiSink: token is empty; pass a token with the ingest scope (target-health token create <name> --scope ' +
        'ingest; is TH_TOKEN set?)',
    );
  }
  for (const name of ['maxBodyBytes', 'timeoutMs'] as const) {
    const v = config[name];
    if (v !== undefined && (!Number.isInteger(v) || v < 1))
      throw new Error(`apiSink: ${name}: must be a whole number ≥ 1 (got ${String(v)})`);
  }
  return {
    url: new URL('v1/events', url.href.endsWith('/') ? url.href : `${url.href}/`).href,
    token: config.token.trim(),
  };
}

/** `Retry-After` in seconds or as an HTTP date, in ms; undefined when absent or unreadable. */
function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The event as one NDJSON line, with the recorder's id when it has none; a string = why it cannot be sent. */
function lineOf(event: Record<string, unknown>, id: string): { line: string } | { problem: string } {
  let json: string;
  try {
    json = JSON.stringify(event);
  } catch (err) {
    return {
      problem: `event: cannot be written as JSON (${describeError(err)}); send plain values (no BigInt, no cycles)`,
    };
  }
  if (event.eventId !== undefined || !json.startsWith('{')) return { line: json };
  const idField = `"eventId":${JSON.stringify(id)}`;
  return { line: json === '{}' ? `{${idField}}` : `{${idField},${json.slice(1)}` };
}

export function apiSink(config: ApiSinkConfig): ApiSink {
  const { url, token } = checkConfig(config);
  const target = new URL(url);
  // Connections stay open between batches (a batch every few hundred ms would otherwise open one each).
  const agents = keepAliveAgents();
  const compress = config.gzip ?? true;
  const maxBodyBytes = config.maxBodyBytes ?? 8 * 1024 * 1024;
  const timeoutMs = config.timeoutMs ?? 60_000;
  let logger = config.logger;
  const log = (): RecorderLogger => (logger ??= defaultRecorderLogger());
  const inFlight = new Set<AbortController>();
  /** Configuration problems (token, URL) are logged at once and then at most once a minute. */
  let lastConfigLogAt = -Infinity;

  function configProblem(err: ApiSinkError): ApiSinkError {
    if (Date.now() - lastConfigLogAt >= 60_000) {
      lastConfigLogAt = Date.now();
      log().error(
        { status: err.status, code: err.code, apiUrl: config.apiUrl },
        `recorder: ${err.message}; events are kept and retried meanwhile`,
      );
    }
    return err;
  }

  async function post(body: string): Promise<{ status: number; json: unknown; retryAfter: string | undefined }> {
    const abort = new AbortController();
    inFlight.add(abort);
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      const payload = compress ? await gzip(Buffer.from(body)) : Buffer.from(body);
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        'content-type': 'application/x-ndjson',
        accept: 'application/json',
      };
      if (compress) headers['content-encoding'] = 'gzip';
      const res = await sendRequest(target, { method: 'POST', headers, body: payload, signal: abort.signal, agents });
      const text = await textOf(res);
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, json, retryAfter: res.header('retry-after') };
    } catch (err) {
      if (abort.signal.aborted)
        throw new ApiSinkError(`no answer from ${url} within ${timeoutMs} ms (timeoutMs)`, 0, 'timeout', false);
      throw new ApiSinkError(`cannot reach the API at ${url} (${describeError(err)})`, 0, 'network', false);
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  }

  /** Sends one part; its refused lines come back numbered by batch position (1-based, as the recorder wants). */
  async function send(part: Part): Promise<IngestResult> {
    const { status, json, retryAfter: retryAfterHeader } = await post(`${part.lines.join('\n')}\n`);
    const error = errorSchema.safeParse(json);
    const code = error.success ? error.data.error.code : `http_${status}`;
    const message = error.success ? error.data.error.message : `HTTP ${status}`;
    if (status === 200 || (status === 400 && code === 'invalid_events')) {
      const result = resultSchema.safeParse(json);
      if (!result.success)
        throw new ApiSinkError(
          `the API at ${url} answered ${status} with a body that is not an events result; is apiUrl the Target ` +
            `Health API?`,
          status,
          'bad_answer',
          false,
        );
      const rejected: RejectedLine[] = result.data.rejected.map((r) => ({
        line: (part.positions[r.index] ?? -1) + 1,
        errors: r.errors,
      }));
      return {
        accepted: result.data.accepted,
        inserted: result.data.inserted,
        duplicates: result.data.duplicates,
        rejected,
      };
    }
    if (status === 401)
      throw configProblem(
        new ApiSinkError(
          `the API refused the token (401: ${message}): pass apiSink a valid token with the ingest scope ` +
            `(target-health token create <name> --scope ingest)`,
          status,
          code,
          false,
        ),
      );
    if (status === 403)
      throw configProblem(
        new ApiSinkError(
          `the API refused the token (403: ${message}): it lacks the ingest scope; create one with ` +
            `target-health token create <name> --scope ingest`,
          status,
          code,
          false,
        ),
      );
    if (status === 404)
      throw configProblem(
        new ApiSinkError(
          `${url} is not found (404): apiUrl must be the API's base URL, like http://127.0.0.1:8787`,
          status,
          code,
          false,
        ),
      );
    const retryAfter = retryAfterMs(retryAfterHeader);
    if (status === 429 || status >= 500)
      throw new ApiSinkError(
        `the API could not take the events now (${status} ${code}: ${message})`,
        status,
        code,
        false,
        retryAfter,
      );
    // 400 (other than invalid_events), 413, 415: the data, not the server — the recorder narrows it down.
    throw new ApiSinkError(`the API refused the batch (${status} ${code}: ${message})`, status, code, true);
  }

  return {
    async write({ events, eventIds }: RecordedBatch): Promise<IngestResult> {
      const total: IngestResult = { accepted: 0, inserted: 0, duplicates: 0, rejected: [] };
      const parts: Part[] = [];
      let part: Part = { lines: [], positions: [], bytes: 0 };
      for (let i = 0; i < events.length; i++) {
        const made = lineOf(events[i]!, eventIds[i]!);
        if ('problem' in made) {
          total.rejected.push({ line: i + 1, errors: [made.problem] });
          continue;
        }
        const bytes = Buffer.byteLength(made.line) + 1;
        if (part.lines.length > 0 && part.bytes + bytes > maxBodyBytes) {
          parts.push(part);
          part = { lines: [], positions: [], bytes: 0 };
        }
        part.lines.push(made.line);
        part.positions.push(i);
        part.bytes += bytes;
      }
      if (part.lines.length > 0) parts.push(part);
      // One part after another: a failure leaves later parts unsent, and the resent batch repeats the
      // stored ones as duplicates (event ids), which the result counts as such.
      for (const p of parts) {
        const r = await send(p);
        total.accepted += r.accepted;
        total.inserted += r.inserted;
        total.duplicates += r.duplicates;
        total.rejected.push(...r.rejected);
      }
      total.rejected.sort((a, b) => a.line - b.line);
      return total;
    },
    isPermanentError: (err) => err instanceof ApiSinkError && err.permanent,
    close() {
      for (const abort of inFlight) abort.abort();
      agents.http.destroy();
      agents.https.destroy();
      return Promise.resolve();
    },
  };
}
