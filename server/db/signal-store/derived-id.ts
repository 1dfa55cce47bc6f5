/**
 * Ids for events sent without `eventId`: `h1:` and 22 base64url characters (132 bits) of the SHA-256 of
 * the event's canonical content (core/signals/canonical.ts). The unique index on (ts, site, event_id) then
 * ignores a resent event like any repeated id, so "send the file again" is always safe.
 *
 * The price, documented in docs/events.md: two events without ids that are identical in every field,
 * time to the millisecond included, count once. A crawler that can make such twins must send ids.
 * Cost: ~1 µs an event; events with a body sample also pay for hashing it (~3 µs per KB). Events with
 * an id (the recorder gives every event one) pay nothing.
 */
import { createHash, hash } from 'node:crypto';
import { canonicalEventParts } from '../../../core/signals/canonical';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';

/** The prefix names the version of the canonical form: a new form needs a new prefix. */
export const DERIVED_ID_PREFIX = 'h1:';
const ID_CHARS = 22;

export function derivedEventId(event: RequestOutcomeEvent): string {
  const [fields, headers, title, body] = canonicalEventParts(event);
  // The common event has neither title nor body: one-shot hash of one short string.
  if (title === null && body === null && headers === 'null')
    return DERIVED_ID_PREFIX + hash('sha256', fields, 'base64url').slice(0, ID_CHARS);
  const h = createHash('sha256').update(fields);
  // Each piece with its length first, so that moving text from one piece to the next changes the id.
  for (const part of [headers, title, body])
    h.update(part === null ? '\nnull' : `\n${part.length}:`).update(part ?? '');
  return DERIVED_ID_PREFIX + h.digest('base64url').slice(0, ID_CHARS);
}
