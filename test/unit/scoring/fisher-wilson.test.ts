import fc from 'fast-check';
import { Z_95, fisherExactGreater, hypergeometricUpperTail, wilsonInterval } from '../../../core/scoring';
import { runs } from '../../kit/sizes';

/** Exact P(X >= k) with BigInt binomials, for comparison on small tables. */
function exactUpperTail(k: number, population: number, successes: number, draws: number): number {
  const choose = (n: number, r: number): bigint => {
    if (r < 0 || r > n) return 0n;
    let result = 1n;
    for (let i = 1; i <= r; i++) result = (result * BigInt(n - r + i)) / BigInt(i);
    return result;
  };
  let numerator = 0n;
  for (let x = k; x <= Math.min(draws, successes); x++)
    numerator += choose(successes, x) * choose(population - successes, draws - x);
  return Number((numerator * 10n ** 30n) / choose(population, draws)) / 1e30;
}

describe('Fisher exact test (one-sided)', () => {
  test('hand-computed tables', () => {
    // [[3,0],[0,3]]: all 3 failures in group A. P = C(3,3)C(3,0)/C(6,3) = 1/20.
    expect(fisherExactGreater(3, 3, 0, 3)).toBeCloseTo(0.05, 14);
    // [[2,1],[0,3]]: N=6, K=2 failures, A draws 3, k=2: C(2,2)C(4,1)/C(6,3) = 4/20 = 0.2.
    expect(fisherExactGreater(2, 3, 0, 3)).toBeCloseTo(0.2, 14);
    // No failures in A: P(X >= 0) = 1.
    expect(fisherExactGreater(0, 10, 5, 10)).toBe(1);
    // More failures than possible is impossible: 0.
    expect(hypergeometricUpperTail(4, 6, 3, 3)).toBe(0);
  });

  test('matches exact rational arithmetic on small tables', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 60 }),
        fc.nat(),
        fc.nat(),
        (nA, nB, fa, fb) => {
          const a = fa % (nA + 1);
          const b = fb % (nB + 1);
          const ours = fisherExactGreater(a, nA, b, nB);
          const exact = exactUpperTail(a, nA + nB, a + b, nA);
          return Math.abs(ours - exact) <= 1e-9 * Math.max(exact, 1e-300) + 1e-15;
        },
      ),
      { numRuns: runs(500) },
    );
  });

  test('stays finite and in [0, 1] on large counts', () => {
    const p = fisherExactGreater(200, 200, 20, 1000);
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThan(1e-100);
    expect(fisherExactGreater(50_000, 1_000_000, 50_000, 1_000_000)).toBeGreaterThan(0.4);
  });
});

describe('Wilson interval', () => {
  test('textbook values', () => {
    // 10/100: centre (0.1 + 1.92/100)/(1 + 3.84/100) ≈ 0.1148, half-width ≈ 0.0596 → [0.0552, 0.1744].
    const i = wilsonInterval(10, 100);
    expect(i.low).toBeCloseTo(0.0552, 4);
    expect(i.high).toBeCloseTo(0.1744, 4);
    // 0/50: [0, z²/(n + z²)] = [0, 3.8415/53.8415] ≈ [0, 0.0713] — not the Wald interval's [0, 0].
    const z = wilsonInterval(0, 50);
    expect(z.low).toBe(0);
    expect(z.high).toBeCloseTo((Z_95 * Z_95) / (50 + Z_95 * Z_95), 12);
  });

  test('no data means any rate; counts above the trials are clamped', () => {
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(wilsonInterval(120, 100)).toEqual(wilsonInterval(100, 100));
  });

  test('contains the observed rate and lies within [0, 1]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e7 }), fc.nat(), (n, k0) => {
        const k = k0 % (n + 1);
        const { low, high } = wilsonInterval(k, n);
        return low >= 0 && high <= 1 && low <= k / n + 1e-12 && k / n <= high + 1e-12;
      }),
    );
  });
});
