/**
 * The loop's tick schedule, as pure arithmetic on workflow time. Ticks fall on the tick interval's grid
 * (multiples of the interval since the epoch: with 60 s ticks, on the minute), so a tick's time — its
 * `asOf`, handed to the assessment — is known in advance and the same in a replay (`target-health
 * replay --tick 60s` walks the same grid).
 *
 * - Each site wakes at its phase (`phaseMs`), a fixed offset after each slot; the tick's time stays the
 *   slot. The first tick of a chain waits for the site's first wake point (`firstPhasedSlot`), at most a
 *   minute.
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

/**
 * The time of the tick about to run (epoch ms), given the booked slot, workflow time and the site's
 * phase (`phaseMs`): a loop woken at slot + phase is on time.
 */
export function tickTime(nextTickAt: string, now: number, intervalMs: number, phase: number): number {
  const due = Date.parse(nextTickAt);
  const late = now - phase - due;
  if (late < intervalMs) return due;
  return due + floorTo(late, intervalMs);
}

/** Milliseconds until the booked slot's wake time, slot + phase (≤ 0: due now). */
export function msUntilDue(nextTickAt: string, now: number, phase: number): number {
  return Date.parse(nextTickAt) + phase - now;
}

/** The slot booked after a tick at `asOf`: the next one on the interval's grid. */
export function nextSlot(asOf: number, intervalMs: number): number {
  return floorTo(asOf, intervalMs) + intervalMs;
}

/**
 * The site's phase on the grid: a fixed offset after each slot at which the site's
 * loop wakes, derived from its name, so a fleet's ticks spread evenly over the interval instead of all
 * landing on the minute (1,000 sites → ~17 ticks a second, not 1,000 at :00), and a thousand loops
 * started at once do not all tick at once either. Spread over the interval, at most a minute: the tick's
 * `asOf` stays the slot (the same windows as a replay on the grid), so the offset is how long after the
 * window closed the site is judged — at most a minute, which also gives late events of the last minute
 * time to land.
 */
export function phaseMs(site: string, intervalMs: number): number {
  const spread = Math.min(intervalMs, MINUTE);
  // FNV-1a (32 bit): cheap, deterministic, well spread over similar host names.
  let h = 0x811c9dc5;
  for (let i = 0; i < site.length; i++) {
    h ^= site.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return Math.floor((h / 0x1_0000_0000) * spread);
}

/**
 * The first slot of a chain: the earliest slot on the first-tick grid (whole minutes, or the
 * interval when shorter) whose wake time (slot + phase) is not in the past. The first tick waits at
 * most a minute (the spread), and starting many loops together spreads their first ticks like the rest.
 */
export function firstPhasedSlot(now: number, phase: number, intervalMs: number): number {
  const unit = Math.min(intervalMs, MINUTE);
  return Math.ceil((now - phase) / unit) * unit;
}
