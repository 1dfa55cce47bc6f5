/**
 * The canonical content of a parsed event: pieces of text that are equal for two events exactly when
 * they say the same thing, whatever the key order, spelling of the site (`Shop.Example.com/p/1` and
 * `shop.example.com`), time format or defaults (`canary: false` and no `canary`). The store derives
 * the id of an event sent without `eventId` from them (server/db/signal-store/derived-id.ts), so that sending
 * a file again stores nothing twice. Pure.
 *
 * Pieces rather than one string: the body sample (up to 64 KB) is hashed as it is, without being copied
 * into a JSON text first (that copy cost more than the hash).
 */
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';

/** Fields in a fixed order, absent ones as null. Versioned by the derived id's prefix: change both together. */
export function canonicalEventParts(
  e: RequestOutcomeEvent,
): [fields: string, headers: string, title: string | null, bodySample: string | null] {
  const x = e.extraction;
  const fields = JSON.stringify([
    e.ts,
    e.site,
    e.route.country ?? null,
    e.route.pool ?? null,
    e.route.session ?? null,
    e.pageType ?? null,
    e.status ?? null,
    e.networkError ?? null,
    e.latencyMs,
    e.bytes ?? null,
    e.retries ?? null,
    e.credits ?? null,
    x === undefined
      ? null
      : [
          x.result,
          x.missingFields !== undefined && x.missingFields.length > 0 ? x.missingFields : null,
          x.validRecords ?? null,
        ],
    e.canary === true,
    e.outcome ?? null,
    e.outcomeReason ?? null,
  ]);
  const headers =
    e.headers === undefined
      ? 'null'
      : JSON.stringify(
          Object.keys(e.headers)
            .sort()
            .map((k) => [k, e.headers![k]]),
        );
  return [fields, headers, e.title ?? null, e.bodySample ?? null];
}
