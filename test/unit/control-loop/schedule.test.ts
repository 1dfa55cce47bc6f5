/**
 * The tick schedule (core/control/schedule.ts): slots on the interval's grid, each site at its phase, late loops skip.
 */
import { firstPhasedSlot, msUntilDue, nextSlot, phaseMs, tickTime } from '../../../core/control/schedule';

const MIN = 60_000;
const T = Date.UTC(2026, 10, 24, 10, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

test('each tick books the next slot on the grid; a booked slot is waited for, then taken as the tick time', () => {
  expect(nextSlot(T, MIN)).toBe(T + MIN);
  expect(nextSlot(T + 30 * MIN, 3_600_000)).toBe(T + 3_600_000);
  expect(msUntilDue(iso(T + MIN), T + 15_000, 0)).toBe(45_000);
  // The timer fires a little late: the tick keeps its slot's time.
  expect(tickTime(iso(T + MIN), T + MIN + 250, MIN, 0)).toBe(T + MIN);
});

test('a loop more than an interval late takes the latest slot that has passed, not every missed one', () => {
  expect(tickTime(iso(T + MIN), T + 10 * MIN + 5_000, MIN, 0)).toBe(T + 10 * MIN);
  expect(tickTime(iso(T + MIN), T + 2 * MIN - 1, MIN, 0)).toBe(T + MIN);
  expect(tickTime(iso(T + MIN), T + 2 * MIN, MIN, 0)).toBe(T + 2 * MIN);
});

describe('the site phase: ticks spread over the interval, asOf stays on the grid', () => {
  const sites = Array.from({ length: 5_000 }, (_, i) => `s${i}.shop-${i % 37}.example.com`);

  test('a fixed offset per site, within the interval and at most a minute', () => {
    for (const interval of [1_000, 5_000, MIN, 5 * MIN, 3_600_000]) {
      for (const s of sites.slice(0, 500)) {
        const p = phaseMs(s, interval);
        expect(Number.isInteger(p)).toBe(true);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(Math.min(interval, MIN));
        expect(phaseMs(s, interval)).toBe(p);
      }
    }
  });

  test('5,000 similar host names fill a minute evenly: no second holds more than twice its share', () => {
    const perSecond = new Array<number>(60).fill(0);
    for (const s of sites) perSecond[Math.floor(phaseMs(s, MIN) / 1000)]! += 1;
    const share = sites.length / 60;
    expect(Math.max(...perSecond)).toBeLessThan(2 * share);
    expect(Math.min(...perSecond)).toBeGreaterThan(share / 2);
  });

  test('a loop wakes at slot + phase and keeps the slot as its tick time, late or not', () => {
    const phase = 23_456;
    expect(msUntilDue(iso(T + MIN), T + 15_000, phase)).toBe(45_000 + phase);
    expect(tickTime(iso(T + MIN), T + MIN + phase + 250, MIN, phase)).toBe(T + MIN);
    // Woken near the end of its phase and a little late: still its slot, not a skip to the next one.
    expect(tickTime(iso(T + MIN), T + MIN + 59_000 + 2_000, MIN, 59_000)).toBe(T + MIN);
    // More than an interval late (from its wake time): the latest slot whose wake time has passed.
    expect(tickTime(iso(T + MIN), T + 4 * MIN + phase + 10, MIN, phase)).toBe(T + 4 * MIN);
    expect(tickTime(iso(T + MIN), T + 4 * MIN + phase - 10, MIN, phase)).toBe(T + 3 * MIN);
  });

  test(
    'the first slot of a chain: ' + 'its wake time is now or later, at most the spread away, and never before its slot',
    () => {
      for (const [interval, now] of [
        [MIN, T + 12_345],
        [5_000, T + 12_345],
        [3_600_000, T + 30 * MIN + 7],
      ] as const) {
        for (const s of sites.slice(0, 300)) {
          const phase = phaseMs(s, interval);
          const slot = firstPhasedSlot(now, phase, interval);
          const wake = slot + phase;
          expect(wake).toBeGreaterThanOrEqual(now);
          expect(wake - now).toBeLessThan(Math.min(interval, MIN));
          expect(slot % Math.min(interval, MIN)).toBe(0);
          expect(tickTime(iso(slot), wake, interval, phase)).toBe(slot);
        }
      }
    },
  );
});
