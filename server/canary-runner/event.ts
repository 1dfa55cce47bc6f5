/**
 * The request-outcome event of a canary fetch (`canary: true`), so the signal store counts canary
 * traffic like the production traffic it travels with. It carries the canary's own verdict as an
 * explicit `outcome` (the classifier already ran on the full response; the event stays small, without
 * the body) and a deterministic `eventId`, so ingesting the same run twice is a no-op.
 */
import { createHash } from 'node:crypto';
import type { FetchOutcome } from '../../core/canaries/fetch-outcome';
import { cutText, wellFormed } from '@target-health/crawler/events/well-formed';
import { parseEvent, type RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import type { Classification } from '@target-health/crawler/events/classify';

const MAX_EVENT_ID = 128;

export function canaryEventId(runKey: string): string {
  const id = `canary:${runKey}`;
  if (id.length <= MAX_EVENT_ID && /^[\x21-\x7e]+$/.test(id)) return id;
  return `canary:${createHash('sha256').update(runKey).digest('hex')}`;
}

export interface CanaryEventInput {
  site: string;
  runKey: string;
  ranAt: Date;
  pool: string | undefined;
  pageType: string | undefined;
  fetched: FetchOutcome;
  classification: Classification;
}

/** A valid event (checked against the event schema: a bug here must not poison the store). */
export function canaryEvent(input: CanaryEventInput): RequestOutcomeEventInput {
  const { fetched } = input;
  const event: RequestOutcomeEventInput = {
    eventId: canaryEventId(input.runKey),
    ts: input.ranAt.getTime(),
    site: input.site,
    route: input.pool === undefined ? {} : { pool: input.pool },
    latencyMs: fetched.latencyMs,
    canary: true,
    outcome: input.classification.outcome,
    // The reason may quote the page (a matched marker): storable text, cut on a code-point boundary.
    outcomeReason: cutText(wellFormed(input.classification.reason), 200, ''),
  };
  if (input.pageType !== undefined) event.pageType = input.pageType;
  if (fetched.kind === 'response') {
    event.status = fetched.status;
    event.bytes = fetched.bytes;
  } else {
    event.networkError = fetched.networkError;
  }
  const checked = parseEvent(event);
  if (!checked.ok)
    throw new Error(`canary event for ${input.runKey} does not match the event schema: ${checked.errors.join('; ')}`);
  return event;
}
