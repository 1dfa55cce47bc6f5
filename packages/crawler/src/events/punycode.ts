/**
 * RFC 3492 Punycode encoder, just enough to turn an internationalised host label into its `xn--` form.
 * Node's `punycode` builtin is deprecated and builtins are off limits here (this module must run inside
 * Temporal's workflow sandbox and in crawler processes alike), so the ~40 lines are inlined.
 * Only encoding is needed: sites are keyed by their ASCII form, never decoded back.
 */
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 0x80;

function adapt(delta: number, numPoints: number, firstTime: boolean): number {
  let d = firstTime ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / numPoints);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW));
}

function digit(d: number): string {
  // 0..25 → a..z, 26..35 → 0..9
  return String.fromCharCode(d < 26 ? d + 97 : d + 22);
}

/** Encodes one label (no dots) to Punycode, without the `xn--` prefix. */
export function punycodeEncode(label: string): string {
  const codePoints = Array.from(label, (ch) => ch.codePointAt(0) ?? 0);
  let output = codePoints
    .filter((cp) => cp < INITIAL_N)
    .map((cp) => String.fromCharCode(cp))
    .join('');
  const basicLength = output.length;
  let handled = basicLength;
  if (basicLength > 0) output += '-';

  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  while (handled < codePoints.length) {
    let next = Number.MAX_SAFE_INTEGER;
    for (const cp of codePoints) if (cp >= n && cp < next) next = cp;
    delta += (next - n) * (handled + 1);
    n = next;
    for (const cp of codePoints) {
      if (cp < n) delta++;
      if (cp !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
        if (q < t) break;
        output += digit(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      output += digit(q);
      bias = adapt(delta, handled + 1, handled === basicLength);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return output;
}
