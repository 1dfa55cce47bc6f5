/**
 * A small Server-Sent Events reader over `fetch` (tests and the controls benchmark): it keeps every event
 * with the time it arrived, counts comment lines (heartbeats), and lets a caller wait for an event that
 * matches — no sleeps.
 */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
  /** performance.now() when the event's last line arrived. */
  receivedAt: number;
}

export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: number;
  /** The first event at index ≥ `from` matching `predicate`, waiting up to `timeoutMs` for it. */
  waitFor(
    predicate: (e: SseEvent) => boolean,
    opts?: { from?: number; timeoutMs?: number; what?: string },
  ): Promise<SseEvent>;
  /** Resolves once `comments` reaches `count`. */
  waitForComments(count: number, timeoutMs: number): Promise<void>;
  /** Called for every event as it arrives. */
  onEvent(listener: (e: SseEvent) => void): void;
  close(): void;
  /** Resolves when the server ends the stream (or close() is called). */
  ended: Promise<void>;
}

export async function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const listeners: Array<(e: SseEvent) => void> = [];
  const wake: Array<() => void> = [];
  const notify = () => {
    for (const w of wake.splice(0)) w();
  };
  const client: SseClient = {
    status: res.status,
    headers: res.headers,
    events,
    comments: 0,
    onEvent: (l) => listeners.push(l),
    close: () => abort.abort(),
    ended: Promise.resolve(),
    waitFor: async (predicate, opts = {}) => {
      const deadline = performance.now() + (opts.timeoutMs ?? 10_000);
      for (;;) {
        const found = events.slice(opts.from ?? 0).find(predicate);
        if (found) return found;
        const left = deadline - performance.now();
        if (left <= 0)
          throw new Error(
            `timed out waiting for ${opts.what ?? 'an event'}; received: ` +
              `${events.map((e) => `${e.event}#${e.id}`).join(', ') || 'none'}`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    waitForComments: async (count, timeoutMs) => {
      const deadline = performance.now() + timeoutMs;
      while (client.comments < count) {
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`timed out waiting for ${count} comment line(s); got ${client.comments}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
  if (res.body === null || res.status !== 200) return client;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  client.ended = (async () => {
    let buffer = '';
    let current: { id?: string; event?: string; data: string[] } = { data: [] };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (current.data.length > 0) {
              const e: SseEvent = {
                id: current.id,
                event: current.event ?? 'message',
                data: current.data.join('\n'),
                receivedAt: performance.now(),
              };
              events.push(e);
              for (const l of listeners) l(e);
            }
            current = { data: [] };
          } else if (line.startsWith(':')) {
            client.comments += 1;
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
            else if (field === 'data') current.data.push(value);
          }
          notify();
        }
      }
    } catch {
      // Aborted by close(), or the server went away.
    } finally {
      notify();
    }
  })();
  return client;
}
