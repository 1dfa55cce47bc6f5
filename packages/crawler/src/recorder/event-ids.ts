/**
 * Event ids the recorder gives events that have none: a random prefix per recorder (96 bits, so two
 * recorders never share one) followed by a fixed-width counter. Ids of one recorder therefore grow
 * monotonically: within one millisecond the store's unique index on (ts, site, event_id) receives
 * them in order (with `site, event_id` leading, as before migration 009, that saved PostgreSQL about
 * a third of its CPU per event against UUIDs). They are also cheaper to make than a UUID.
 */
import { randomBytes } from 'node:crypto';

/** 36^10 ≈ 3.7e15 ids per recorder before the width grows (it still stays unique after that). */
const COUNTER_WIDTH = 10;

export function createEventIdSource(): () => string {
  const prefix = `${randomBytes(12).toString('base64url')}-`;
  let counter = 0;
  return () => {
    counter += 1;
    return prefix + counter.toString(36).padStart(COUNTER_WIDTH, '0');
  };
}
