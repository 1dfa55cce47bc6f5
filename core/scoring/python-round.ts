/**
 * Python 3's built-in `round(x)` for a float: the nearest integer, ties to even, decided on the exact
 * double (no decimal re-interpretation). The reference algorithm uses it, and `Math.round` differs
 * (it rounds ties up: Math.round(82.5) = 83, Python gives 82).
 */
export function pythonRound(x: number): number {
  if (!Number.isFinite(x)) throw new RangeError(`cannot round ${x} to an integer`);
  const floor = Math.floor(x);
  // x - floor(x) is exact for every finite double, so this compares the true fractional part with 0.5.
  const fraction = x - floor;
  let result: number;
  if (fraction < 0.5) result = floor;
  else if (fraction > 0.5) result = floor + 1;
  else result = floor % 2 === 0 ? floor : floor + 1;
  // Python returns an int, which has no negative zero (round(-0.3) == 0).
  return result === 0 ? 0 : result;
}
