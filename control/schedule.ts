/**
 * The loop's tick schedule, as pure arithmetic on workflow time. Ticks fall on the tick interval's grid
 * (multiples of the interval since the epoch: with 60 s ticks, on the minute), so a tick's time — its
 * `asOf`, handed to the assessment — is known in advance and the same in a replay (`target-health
 * replay --tick 60s` walks the same grid).
 *
 * - The first tick of a chain runs at once, at the latest whole minute (or the latest slot, for ticks
 *   shorter than a minute): it judges the window that ended then, not one a whole interval old.
 * - Each tick books the next slot (`nextTickAt`, carried through continue-as-new, so a new run waits
 *   for it instead of ticking at once).
 * - A late loop (worker down, a tick slower than the interval) does not catch up slot by slot — a
 *   throttling step per missed slot would punish the site for our outage — but takes the latest slot
 *   that has passed and goes on from there.
 * - A retried assessment activity keeps its tick's `asOf`: it judges the same window, however late it
 *   runs (events ingested meanwhile for that window do count).
 */
const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;

const MINUTE = 60_000;

/** The time of the tick about to run (epoch ms), given the booked slot (or null) and workflow time. */
export function tickTime(nextTickAt: string | null, now: number, intervalMs: number): number {
  if (nextTickAt === null) return floorTo(now, Math.min(intervalMs, MINUTE));
  const due = Date.parse(nextTickAt);
  if (now - due < intervalMs) return due;
  return due + floorTo(now - due, intervalMs);
}

/** Milliseconds until the booked slot (≤ 0: due now). The first tick of a chain is due at once. */
export function msUntilDue(nextTickAt: string | null, now: number): number {
  return nextTickAt === null ? 0 : Date.parse(nextTickAt) - now;
}

/** The slot booked after a tick at `asOf`: the next one on the interval's grid. */
export function nextSlot(asOf: number, intervalMs: number): number {
  return floorTo(asOf, intervalMs) + intervalMs;
}
