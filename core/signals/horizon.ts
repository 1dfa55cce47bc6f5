/**
 * The time horizon of the signal store: which event times it takes, relative to "now".
 *
 * - Not older than {@link EVENT_HORIZON}.maxAgeMs (30 days). A tick reads 15 minutes and a 14-day
 *   baseline that ends a day ago, so an event older than about 15 days can never change a score, and
 *   30 days leave room for back-filling two weeks of logs. Every day an event falls on is a partition
 *   of the raw and minute tables: the horizon bounds how many a batch (or a hostile file) can create.
 * - Not more than {@link EVENT_HORIZON}.maxAheadMs (5 minutes) in the future: crawler clocks drift by
 *   seconds, not minutes; a time further ahead is a wrong clock or a unit mistake, and would sit in
 *   the current window of a tick that has not happened yet.
 *
 * Pure: the caller passes the clock (the ingester's, so tests and back-fills can move it).
 */
import { describeValue } from '@target-health/crawler/events/zod-issues';

const MINUTE = 60_000;
const DAY = 86_400_000;

export interface EventHorizon {
  /** Oldest accepted event, in ms before now. */
  maxAgeMs: number;
  /** Furthest accepted event in the future, in ms after now. */
  maxAheadMs: number;
}

export const EVENT_HORIZON: EventHorizon = { maxAgeMs: 30 * DAY, maxAheadMs: 5 * MINUTE };

function span(ms: number): string {
  const n = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;
  // Days to one decimal, rounded down: "30.9 days" past a 30-day limit, never "31" for less.
  if (ms >= 2 * DAY) return n(Math.floor((ms / DAY) * 10) / 10, 'day');
  if (ms >= 2 * 3_600_000) return n(Math.floor(ms / 3_600_000), 'hour');
  if (ms >= 10 * MINUTE || (ms >= MINUTE && ms % MINUTE === 0)) return n(Math.floor(ms / MINUTE), 'minute');
  return n(Math.ceil(ms / 1000), 'second');
}

/**
 * Why `ts` (epoch ms, already parsed) is outside the horizon around `now`, as a `ts: …` message, or
 * undefined when it is inside. `sent` is the value as the crawler sent it, for the message.
 */
export function horizonProblem(
  ts: number,
  now: number,
  horizon: EventHorizon = EVENT_HORIZON,
  sent: unknown = ts,
): string | undefined {
  const at = new Date(ts).toISOString();
  if (ts < now - horizon.maxAgeMs) {
    return (
      `ts: is ${span(now - ts)} before now (${at}, got ${describeValue(sent)}); the store takes events of the last ` +
      `${span(horizon.maxAgeMs)} only (older ones can no longer reach a window or baseline)`
    );
  }
  if (ts > now + horizon.maxAheadMs) {
    return (
      `ts: is ${span(ts - now)} after now (${at}, got ${describeValue(sent)}); events more than ` +
      (`${span(horizon.maxAheadMs)} in the future are refused — check the crawler's clock and that ts is in UTC ` +
        `milliseconds`)
    );
  }
  return undefined;
}
