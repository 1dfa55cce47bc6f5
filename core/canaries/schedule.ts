/**
 * When a canary is due. Time is cut into slots of the canary's interval; a canary is due when its
 * current slot has no run yet, and a run is recorded under the key `<canaryId>/<slot start>`. So the
 * activity can be called every tick (and retried) safely: a second call in the same slot finds the run
 * and fetches nothing, a worker back from a long outage runs each canary once (no catch-up burst).
 *
 * Each canary's slots are shifted by a stable offset derived from its id, so a fleet of 15-minute
 * canaries does not fire in the same second at :00, :15, :30 and :45. Pure: workflow code may import it.
 */

export interface Slot {
  /** Slot start, ISO-8601: the run's `scheduledAt`. */
  scheduledAt: string;
  /** `<canaryId>/<scheduledAt>`: the run's idempotency key. */
  runKey: string;
  /** When the next slot starts (ISO-8601). */
  nextAt: string;
}

export function slotFor(canaryId: string, intervalMs: number, asOfMs: number): Slot {
  const offset = stableOffset(canaryId, intervalMs);
  const start = Math.floor((asOfMs - offset) / intervalMs) * intervalMs + offset;
  const scheduledAt = new Date(start).toISOString();
  return { scheduledAt, runKey: runKeyFor(canaryId, scheduledAt), nextAt: new Date(start + intervalMs).toISOString() };
}

export function runKeyFor(canaryId: string, scheduledAt: string): string {
  return `${canaryId}/${scheduledAt}`;
}

/** FNV-1a of the id, in whole seconds within the interval (slots start on a second). */
export function stableOffset(canaryId: string, intervalMs: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < canaryId.length; i++) {
    hash ^= canaryId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const seconds = Math.max(1, Math.floor(intervalMs / 1000));
  return (hash % seconds) * 1000;
}
