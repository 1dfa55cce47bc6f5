import { pythonRound } from '../../../core/scoring/python-round';

describe('pythonRound (Python 3 round(), ties to even on the exact double)', () => {
  test.each([
    [82.5, 82], // tie, 82 even → down (Math.round would give 83)
    [87.5, 88], // tie, 88 even → up
    [0.5, 0],
    [1.5, 2],
    [2.5, 2],
    [-0.5, 0], // Python: round(-0.5) == 0, and an int has no negative zero
    [-1.5, -2],
    [-2.5, -2],
    [99.125, 99],
    [99.75, 100],
    [0.49999999999999994, 0], // largest double below 0.5: not a tie
    [52.50000000000001, 53], // one ulp above the tie
    [4503599627370497, 4503599627370497], // 2^52 + 1: already an integer
    [0, 0],
  ])('round(%p) = %p', (x, expected) => {
    expect(Object.is(pythonRound(x), expected)).toBe(true);
  });

  test('never returns negative zero', () => {
    expect(Object.is(pythonRound(-0.3), 0)).toBe(true);
    expect(Object.is(pythonRound(-0), 0)).toBe(true);
  });

  test('rejects non-finite input like Python (OverflowError / ValueError)', () => {
    expect(() => pythonRound(Number.NaN)).toThrow(RangeError);
    expect(() => pythonRound(Infinity)).toThrow(RangeError);
  });
});
