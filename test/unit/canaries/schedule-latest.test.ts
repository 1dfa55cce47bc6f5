import { canaryWindowInput, formatCanaryEvidence } from '../../../core/canaries/latest';
import { runKeyFor, slotFor, stableOffset } from '../../../core/canaries/schedule';
import type { CanaryRunSummary } from '../../../core/canaries/types';

const MIN = 60_000;
const T0 = Date.parse('2025-03-14T10:00:00.000Z');

describe('canary schedule slots', () => {
  test('one slot per interval: the same key within a slot, the next key after it', () => {
    const id = 'shop.example.com/price';
    const first = slotFor(id, 15 * MIN, T0);
    const start = Date.parse(first.scheduledAt);
    expect(start).toBeLessThanOrEqual(T0);
    expect(T0 - start).toBeLessThan(15 * MIN);
    expect(first.runKey).toBe(`${id}/${first.scheduledAt}`);
    expect(slotFor(id, 15 * MIN, start).runKey).toBe(first.runKey);
    expect(slotFor(id, 15 * MIN, start + 15 * MIN - 1).runKey).toBe(first.runKey);
    const next = slotFor(id, 15 * MIN, start + 15 * MIN);
    expect(next.scheduledAt).toBe(first.nextAt);
    expect(next.runKey).not.toBe(first.runKey);
    expect(runKeyFor(id, next.scheduledAt)).toBe(next.runKey);
  });

  test('offsets are stable per canary, whole seconds inside the interval, and spread canaries out', () => {
    const ids = Array.from({ length: 200 }, (_, i) => `site-${i}.example.com/price`);
    const offsets = ids.map((id) => stableOffset(id, 15 * MIN));
    expect(ids.map((id) => stableOffset(id, 15 * MIN))).toEqual(offsets);
    for (const o of offsets) {
      expect(o % 1000).toBe(0);
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(15 * MIN);
    }
    // 200 canaries land on many different seconds, not on :00/:15/:30/:45.
    expect(new Set(offsets).size).toBeGreaterThan(150);
  });
});

function run(over: Partial<CanaryRunSummary>): CanaryRunSummary {
  return {
    canaryId: 'shop.example.com/price',
    site: 'shop.example.com',
    name: 'price',
    url: 'https://shop.example.com/p/1',
    route: 'route residential-de',
    result: 'pass',
    reason: 'status 200; 1 check holds',
    evidence: '.price text equals "$139.95": "$139.95"',
    outcome: 'ok',
    status: 200,
    latencyMs: 120,
    countsForSite: true,
    scheduledAt: new Date(T0 - 5 * MIN).toISOString(),
    ranAt: new Date(T0 - 5 * MIN + 900).toISOString(),
    trigger: 'schedule',
    intervalMs: 15 * MIN,
    revision: 1,
    ...over,
  };
}

describe('canary window input', () => {
  test("counts each canary's latest fresh result: mismatches, failures (blocked + error), runs", () => {
    const latest = [
      run({ canaryId: 'shop.example.com/a', result: 'pass' }),
      run({
        canaryId: 'shop.example.com/b',
        result: 'mismatch',
        reason: 'wrong value on a normal-looking page: .price text equals "$139.95", got "$119.95"',
        evidence: 'expected "$139.95", got "$119.95"',
        outcome: 'ok',
      }),
      run({ canaryId: 'shop.example.com/c', result: 'blocked', outcome: 'challenge', status: 403 }),
      run({ canaryId: 'shop.example.com/d', result: 'error', outcome: 'error', status: null }),
    ];
    const { canary, evidence } = canaryWindowInput(latest, { asOf: T0 });
    expect(canary).toEqual({ runs: 4, failures: 2, mismatches: 1 });
    expect(evidence.map((e) => [e.canaryId, e.result])).toEqual([
      ['shop.example.com/b', 'mismatch'],
      ['shop.example.com/c', 'blocked'],
      ['shop.example.com/d', 'error'],
      ['shop.example.com/a', 'pass'],
    ]);
  });

  test('a result older than 3 intervals is stale: shown, not counted', () => {
    const old = run({ result: 'mismatch', scheduledAt: new Date(T0 - 46 * MIN).toISOString() });
    const { canary, evidence } = canaryWindowInput([old], { asOf: new Date(T0) });
    expect(canary).toEqual({ runs: 0, failures: 0, mismatches: 0 });
    expect(evidence[0]).toMatchObject({ stale: true, result: 'mismatch' });
    expect(canaryWindowInput([old], { asOf: T0, maxAgeIntervals: 4 }).canary.mismatches).toBe(1);
  });

  test('runs that failed on our own configuration count for nothing', () => {
    const config = run({
      result: 'error',
      outcome: null,
      countsForSite: false,
      reason: 'configuration: route label "x" is not in TARGET_HEALTH_ROUTES on this worker',
    });
    expect(canaryWindowInput([config], { asOf: T0 }).canary).toEqual({ runs: 0, failures: 0, mismatches: 0 });
  });

  test('one line per canary for notifications', () => {
    const [e] = canaryWindowInput(
      [run({ result: 'mismatch', reason: 'wrong value', evidence: 'expected "$139.95", got "$119.95"' })],
      { asOf: T0 },
    ).evidence;
    expect(formatCanaryEvidence(e!)).toBe(
      'MISMATCH shop.example.com/price (09:55Z, route residential-de): wrong value — expected "$139.95", got "$119.95"',
    );
    const [p] = canaryWindowInput([run({})], { asOf: T0 + 60 * MIN }).evidence;
    expect(formatCanaryEvidence(p!)).toBe(
      'PASS shop.example.com/price (09:55Z, route residential-de, stale): status 200; 1 check holds',
    );
  });
});
