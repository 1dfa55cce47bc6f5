/**
 * What `record()` takes: the request-outcome event as a crawler writes it (packages/crawler/src/events/event.ts,
 * docs/events.md), typed from the schema's own input type, so a misspelt field in an object literal fails to
 * compile instead of being refused by the store at run time.
 *
 * One loosening: a header value may be `undefined`. HTTP libraries type headers that way (Node's
 * `IncomingHttpHeaders`, Crawlee's `response.headers`), and such a value is no problem of the event — the
 * header is simply absent. {@link withoutUndefinedHeaders} removes those values before the event is kept, so
 * one of them never gets the whole event refused.
 */
import type { RequestOutcomeEventInput } from '../events/event';

/** A response header value as HTTP clients hand it over: absent (`undefined`), one value, or repeated values. */
export type RecordHeaderValue = string | readonly string[] | undefined;

/** The event `record()` takes (the schema's input type, with headers as HTTP clients type them). */
export type RecordInput = Omit<RequestOutcomeEventInput, 'headers'> & {
  /** Response headers (any case); `undefined` values are left out. */
  headers?: Readonly<Record<string, RecordHeaderValue>> | undefined;
};

/** Same as {@link RecordInput}: the name a crawler looks for. */
export type CrawlEvent = RecordInput;

/**
 * The event itself when none of its header values is `undefined` (the usual case: no copy, as the recorder
 * keeps events by reference); otherwise a shallow copy whose `headers` leave those out. A list value's
 * `undefined` entries are left out too. The crawler's object is never changed.
 */
export function withoutUndefinedHeaders<T extends object>(event: T): T {
  const headers = (event as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return event;
  let clean: Record<string, unknown> | undefined;
  for (const name of Object.keys(headers)) {
    const value: unknown = (headers as Record<string, unknown>)[name];
    const listWithHoles = Array.isArray(value) && value.includes(undefined);
    const changed = value === undefined || listWithHoles;
    if (!changed && clean === undefined) continue;
    const fixed: unknown = listWithHoles ? (value as unknown[]).filter((v) => v !== undefined) : value;
    // First value to fix: copy what came before it (without a prototype, as the schema keeps headers).
    if (clean === undefined) {
      clean = Object.create(null) as Record<string, unknown>;
      for (const before of Object.keys(headers)) {
        if (before === name) break;
        clean[before] = (headers as Record<string, unknown>)[before];
      }
    }
    if (fixed !== undefined) clean[name] = fixed;
  }
  return clean === undefined ? event : { ...event, headers: clean };
}
