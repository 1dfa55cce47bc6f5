/** The tick schedule (control/schedule.ts): slots on the interval's grid, the first at once, late loops skip. */
import { msUntilDue, nextSlot, tickTime } from '../../../control/schedule';

const MIN = 60_000;
const T = Date.UTC(2026, 10, 24, 10, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

test('the first tick runs at once, at the latest whole minute (or slot, for ticks under a minute)', () => {
  expect(msUntilDue(null, T + 12_345)).toBe(0);
  expect(tickTime(null, T + 12_345, MIN)).toBe(T);
  expect(tickTime(null, T + 30 * MIN + 12_345, 3_600_000)).toBe(T + 30 * MIN);
  expect(tickTime(null, T + 12_345, 5_000)).toBe(T + 10_000);
});

test('each tick books the next slot on the grid; a booked slot is waited for, then taken as the tick time', () => {
  expect(nextSlot(T, MIN)).toBe(T + MIN);
  expect(nextSlot(T + 30 * MIN, 3_600_000)).toBe(T + 3_600_000);
  expect(msUntilDue(iso(T + MIN), T + 15_000)).toBe(45_000);
  // The timer fires a little late: the tick keeps its slot's time.
  expect(tickTime(iso(T + MIN), T + MIN + 250, MIN)).toBe(T + MIN);
});

test('a loop more than an interval late takes the latest slot that has passed, not every missed one', () => {
  expect(tickTime(iso(T + MIN), T + 10 * MIN + 5_000, MIN)).toBe(T + 10 * MIN);
  expect(tickTime(iso(T + MIN), T + 2 * MIN - 1, MIN)).toBe(T + MIN);
  expect(tickTime(iso(T + MIN), T + 2 * MIN, MIN)).toBe(T + 2 * MIN);
});
