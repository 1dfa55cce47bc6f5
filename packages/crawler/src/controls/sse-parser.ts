/**
 * A Server-Sent Events line parser (the "event stream interpretation" of the HTML standard, §9.2.6),
 * written here rather than taken from a package so the controls client runs on Node.js 16 with no
 * dependency: eventsource-parser 3 requires Node.js 18. It parses text the caller has already decoded
 * (a streaming TextDecoder, which also drops the UTF-8 BOM), in chunks split anywhere — a line, or a
 * CRLF pair, may arrive in two chunks.
 */

export interface SseMessage {
  /** The `event:` field of this message; undefined when it had none (the standard's "message"). */
  event: string | undefined;
  /** The `data:` lines of this message, joined with "\n". */
  data: string;
  /**
   * The last event ID as the standard keeps it: the latest `id:` seen so far in the stream (it carries
   * over to later messages without one); undefined when no `id:` came yet.
   */
  id: string | undefined;
}

export interface SseParserCallbacks {
  onEvent(message: SseMessage): void;
  /** A `retry:` field with a valid (all digits) reconnection time, in milliseconds. */
  onRetry?(ms: number): void;
}

export interface SseParser {
  feed(chunk: string): void;
  /** Forgets a partial line and message (after a reconnection); the last event ID is kept. */
  reset(): void;
}

const DIGITS = /^[0-9]+$/;

export function createSseParser(callbacks: SseParserCallbacks): SseParser {
  let partial = '';
  // A chunk ending in CR: if the next one starts with LF, that LF belongs to the same line end.
  let afterCr = false;
  let data: string[] = [];
  let event: string | undefined;
  let lastEventId: string | undefined;

  function dispatch(): void {
    const lines = data;
    const type = event;
    data = [];
    event = undefined;
    // A block without data lines sets no event off (an id-only or retry-only block, a lone heartbeat).
    if (lines.length === 0) return;
    callbacks.onEvent({ event: type, data: lines.join('\n'), id: lastEventId });
  }

  function line(text: string): void {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return; // a comment: the server's heartbeat
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        data.push(value);
        return;
      case 'event':
        event = value;
        return;
      case 'id':
        // The standard ignores an id with a NULL in it (it could not be sent back in a header).
        if (!value.includes('\0')) lastEventId = value;
        return;
      case 'retry':
        if (DIGITS.test(value)) callbacks.onRetry?.(Number.parseInt(value, 10));
        return;
      default:
        return; // unknown fields are ignored
    }
  }

  return {
    feed(chunk) {
      let text = chunk;
      if (afterCr && text.startsWith('\n')) text = text.slice(1);
      afterCr = false;
      let start = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        line(partial + text.slice(start, i));
        partial = '';
        if (c === 13) {
          if (i + 1 === text.length) afterCr = true;
          else if (text.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      partial += text.slice(start);
    },
    reset() {
      partial = '';
      afterCr = false;
      data = [];
      event = undefined;
    },
  };
}
