/**
 * The controls client over the API's Server-Sent Events stream (`GET /v1/controls/stream`, docs/api.md
 * "Controls"): one connection for every site of a crawler process.
 *
 * - Parsed with the package's own SSE line parser (sse-parser.ts) over node:http (../http.ts; Node 16
 *   has no fetch), with `Authorization: Bearer`.
 * - A dropped stream is reconnected with `Last-Event-ID`: the server replays the changes after it, or sends
 *   a fresh snapshot when it cannot (another server process, a restart). Waits between attempts start at
 *   the server's `retry:` and double per failure up to `reconnectMaxMs`, with jitter (a fleet that lost the
 *   API together does not come back together).
 * - The server sends a heartbeat comment every 15 s: a stream silent for longer than `silenceTimeoutMs`
 *   (two heartbeats and some slack) is taken for dead (a proxy or NAT that dropped it without a word) and
 *   reconnected.
 * - 401/403/404 and 400 make ready() reject at once with one line naming the token or URL problem; the
 *   client keeps retrying at the slowest pace meanwhile (someone may fix the token).
 */
import { retryDelayMs } from '../recorder/backoff';
import { defaultRecorderLogger, describeError, type RecorderLogger } from '../recorder/report';
import { tryNormaliseSite } from '../events/site';
import { ControlsClientError, ControlsState, type ControlsClient, type UnknownSitePolicy } from './controls-state';
import { parseSiteControls, snapshotSchema } from './record-schema';
import { createSseParser, type SseMessage } from './sse-parser';
import { discard, send, textOf, type HttpAnswer } from '../http';

export interface ControlsClientOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:8787` (process.env.TH_API). */
  apiUrl: string;
  /** A token with the `read` scope (`target-health token create crawler-eu --scope read`). */
  token: string;
  /** Follow only these sites (any spelling); default: every site. */
  sites?: readonly string[];
  /**
   * What controlsFor() answers for a site with no record yet: 'allow' (undefined: your defaults; the default) or
   * 'pause'.
   */
  unknownSite?: UnknownSitePolicy;
  /** Where connection problems are logged (a pino logger fits); default: JSON lines on stderr. */
  logger?: RecorderLogger;
  /** ready() rejects when no snapshot arrived within this (10 s). */
  readyTimeoutMs?: number;
  /** A stream silent this long is reconnected (35 s: two 15 s heartbeats and 5 s of slack). */
  silenceTimeoutMs?: number;
  /** Longest wait between reconnection attempts (30 s). */
  reconnectMaxMs?: number;
  /** Waiting for the answer's headers at most (10 s). */
  connectTimeoutMs?: number;
}

/** The server's reconnection delay until it sends its own `retry:`. */
const DEFAULT_RETRY_MS = 1_000;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`createControlsClient: ${name}: must be a whole number of milliseconds ≥ 1 (got ${String(value)})`);
  return value;
}

function streamUrl(options: ControlsClientOptions): URL {
  let base: URL;
  try {
    base = new URL(options.apiUrl);
  } catch {
    throw new Error(
      `createControlsClient: apiUrl: must be the API's base URL like http://127.0.0.1:8787 (got ` +
        `${JSON.stringify(options.apiUrl)})`,
    );
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new Error(
      `createControlsClient: apiUrl: must start with http:// or https:// (got ${JSON.stringify(options.apiUrl)})`,
    );
  const url = new URL('v1/controls/stream', base.href.endsWith('/') ? base.href : `${base.href}/`);
  (options.sites ?? []).forEach((site, i) => {
    const r = typeof site === 'string' ? tryNormaliseSite(site) : undefined;
    if (r === undefined || !r.ok)
      throw new Error(
        `createControlsClient: sites[${i}]: ` +
          `${r === undefined ? 'must be a host name like shop.example.com' : r.error.message}`,
      );
    url.searchParams.append('site', r.site);
  });
  return url;
}

/** The refusal an answer other than 200 means, named for the person who must fix it. */
function refusalOf(status: number, message: string, url: URL): ControlsClientError {
  if (status === 401)
    return new ControlsClientError(
      `controls: the API refused the token (401: ${message}); pass a valid token with the read scope ` +
        `(target-health token create <name> --scope read)`,
      'unauthorized',
    );
  if (status === 403)
    return new ControlsClientError(
      `controls: the token lacks the read scope (403: ${message}); create one with target-health token create ` +
        `<name> --scope read`,
      'forbidden',
    );
  if (status === 404)
    return new ControlsClientError(
      `controls: ${url.origin}${url.pathname} is not found (404); apiUrl must be the Target Health API's base ` +
        `URL, like http://127.0.0.1:8787`,
      'not_found',
    );
  return new ControlsClientError(`controls: the API refused the stream request (${status}: ${message})`, 'bad_request');
}

async function errorMessageOf(res: HttpAnswer): Promise<string> {
  const text = await textOf(res, 64 * 1024).catch(() => '');
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message;
  } catch {
    // not the API's error shape
  }
  return text.slice(0, 200) || res.statusText;
}

/** `createControlsClient({ apiUrl, token })`: follows the API's controls stream; see the module comment. */
export function createControlsClient(options: ControlsClientOptions): ControlsClient {
  if (typeof options !== 'object' || options === null) throw new Error('createControlsClient: pass { apiUrl, token }');
  const url = streamUrl(options);
  if (typeof options.token !== 'string' || options.token.trim() === '') {
    throw new Error(
      'createControlsClient: token is empty; pass a token with the read scope (target-health token create ' +
        '<name> --scope read; is TH_TOKEN set?)',
    );
  }
  if (options.unknownSite !== undefined && options.unknownSite !== 'allow' && options.unknownSite !== 'pause') {
    throw new Error(
      `createControlsClient: unknownSite: must be 'allow' or 'pause' (got ${JSON.stringify(options.unknownSite)})`,
    );
  }
  const token = options.token.trim();
  const silenceTimeoutMs = positive('silenceTimeoutMs', options.silenceTimeoutMs, 35_000);
  const reconnectMaxMs = positive('reconnectMaxMs', options.reconnectMaxMs, 30_000);
  const connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, 10_000);
  let logger = options.logger;
  const log = (): RecorderLogger => (logger ??= defaultRecorderLogger());
  const state = new ControlsState(
    options.unknownSite ?? 'allow',
    positive('readyTimeoutMs', options.readyTimeoutMs, 10_000),
    log,
    `the controls stream at ${url.origin}`,
  );

  let closed = false;
  let current: AbortController | undefined;
  let lastEventId: string | undefined;
  let serverRetryMs = DEFAULT_RETRY_MS;
  let wakeSleeper: (() => void) | undefined;

  function onEvent(message: SseMessage): void {
    if (message.id !== undefined) lastEventId = message.id;
    if (message.event !== 'snapshot' && message.event !== 'controls') return;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      log().warn(
        { event: message.event, id: message.id },
        `controls: ignored a ${message.event} event that is not JSON`,
      );
      return;
    }
    if (message.event === 'snapshot') {
      const snapshot = snapshotSchema.safeParse(data);
      if (!snapshot.success) {
        log().warn(
          { id: message.id, problem: snapshot.error.issues[0]?.message },
          'controls: ignored a snapshot that is not a list of controls records',
        );
        return;
      }
      state.applySnapshot(snapshot.data.sites);
      return;
    }
    const record = parseSiteControls(data);
    if (record.ok) state.apply(record.record);
    else
      log().warn(
        { id: message.id, problem: record.error },
        'controls: ignored a controls event that is not a controls record',
      );
  }

  /**
   * One connection, until it ends; true when it got as far as an event (the next attempt starts from the shortest
   * wait).
   */
  async function connectOnce(): Promise<{ progressed: boolean; refused: boolean }> {
    const abort = new AbortController();
    current = abort;
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      'cache-control': 'no-cache',
    };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    let res: HttpAnswer;
    const connectTimer = setTimeout(() => abort.abort(), connectTimeoutMs);
    try {
      res = await send(url, { method: 'GET', headers, signal: abort.signal });
    } catch (err) {
      if (!closed)
        state.disconnected(
          abort.signal.aborted
            ? `no answer within ${connectTimeoutMs} ms`
            : `cannot reach ${url.origin} (${describeError(err)})`,
        );
      return { progressed: false, refused: false };
    } finally {
      clearTimeout(connectTimer);
    }
    if (res.status !== 200) {
      const message = await errorMessageOf(res);
      if (res.status === 429 || res.status >= 500) {
        state.disconnected(`the API answered ${res.status} (${message})`);
        return { progressed: false, refused: false };
      }
      state.refused(refusalOf(res.status, message, url));
      return { progressed: false, refused: true };
    }
    const contentType = res.header('content-type');
    if (!(contentType ?? '').startsWith('text/event-stream')) {
      abort.abort();
      discard(res);
      state.refused(
        new ControlsClientError(
          `controls: ${url.origin}${url.pathname} answered ${contentType ?? 'no content type'}, not an event ` +
            `stream; is apiUrl the Target Health API?`,
          'not_a_stream',
        ),
      );
      return { progressed: false, refused: true };
    }

    state.connectedNow();
    let progressed = false;
    let silent = false;
    let watchdog: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        silent = true;
        abort.abort();
      }, silenceTimeoutMs);
      watchdog.unref();
    };
    const parser = createSseParser({
      onEvent: (message) => {
        progressed = true;
        onEvent(message);
      },
      onRetry: (ms) => {
        serverRetryMs = ms;
      },
    });
    const decoder = new TextDecoder();
    let problem = 'the server ended the stream';
    heard();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        heard();
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch (err) {
      problem = silent
        ? `the stream was silent for ${silenceTimeoutMs} ms (no heartbeat)`
        : `the stream broke (${describeError(err)})`;
    } finally {
      clearTimeout(watchdog);
    }
    if (!closed) state.disconnected(problem);
    return { progressed, refused: false };
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        wakeSleeper = undefined;
        resolve();
      }
      wakeSleeper = done;
    });
  }

  const running = (async () => {
    let failures = 0;
    while (!closed) {
      const outcome = await connectOnce();
      if (closed) break;
      failures = outcome.progressed ? 1 : failures + 1;
      // A refusal waits the longest: it needs a person, and hammering the API will not help.
      const delay = outcome.refused
        ? reconnectMaxMs
        : retryDelayMs(failures, { initialMs: serverRetryMs, maxMs: Math.max(reconnectMaxMs, serverRetryMs) });
      await sleep(delay);
    }
  })();

  return {
    controlsFor: (site) => state.controlsFor(site),
    onChange: (listener) => state.onChange(listener),
    ready: () => state.ready(),
    status: () => state.status(),
    async close() {
      if (closed) return running;
      closed = true;
      state.close();
      current?.abort();
      wakeSleeper?.();
      return running;
    },
  };
}
