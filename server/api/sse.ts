/**
 * One Server-Sent Events connection (the `text/event-stream` format): the stream Fastify sends, events
 * and comment heartbeats written to it, and a cap on what a slow client may leave unread — past it the
 * connection is ended (the client reconnects with `Last-Event-ID` and resumes) instead of the server
 * buffering without bound.
 */
import { PassThrough } from 'node:stream';

export interface SseOptions {
  /** A comment line this often, so proxies and clients see the connection is alive (default 15 s). */
  heartbeatMs?: number;
  /** Unread bytes allowed before the connection is ended (default 4 MiB). */
  maxBufferedBytes?: number;
  /** Called once, whoever ended the connection. */
  onClose?: () => void;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx and similar proxies buffer responses unless told not to: events would arrive in bursts.
  'x-accel-buffering': 'no',
  // A stream is one long answer: once it ends the client reconnects anyway, and a connection kept alive
  // after it would hold up the server's close until the keep-alive timeout.
  connection: 'close',
};

export class SseConnection {
  readonly stream = new PassThrough();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly maxBufferedBytes: number;
  private ended = false;

  constructor(private readonly options: SseOptions = {}) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), options.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
    // The client went away (Fastify destroys the stream) or we ended it.
    this.stream.once('close', () => this.finish());
  }

  get closed(): boolean {
    return this.ended;
  }

  /** The client's reconnection delay, sent once at the start. */
  retry(ms: number): void {
    this.write(`retry: ${ms}\n\n`);
  }

  /** `data` is one line of JSON (JSON.stringify never writes a raw newline). */
  event(name: string, id: number, data: string): void {
    this.write(`id: ${id}\nevent: ${name}\ndata: ${data}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.stream.end();
    this.finish();
  }

  private write(chunk: string): void {
    if (this.ended) return;
    if (this.stream.writableLength + this.stream.readableLength > this.maxBufferedBytes) {
      this.stream.destroy();
      this.finish();
      return;
    }
    this.stream.write(chunk);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.options.onClose?.();
  }
}
