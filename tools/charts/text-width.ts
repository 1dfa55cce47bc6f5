/**
 * How wide a line of text is drawn, estimated without a font engine: Vega's headless renderer has no canvas to
 * measure with, and the marks' layout must know where a label ends to keep the next one off it. The widths are
 * DejaVu Sans's advances (the face Debian machines draw with; the fallbacks are narrower) rounded up per class
 * of character, so the estimate errs wide: a label may end a little early, never run into its neighbour.
 */

/** Em widths, upper bounds for each class (DejaVu Sans: i 0.28, t 0.39, e 0.62, n 0.63, w 0.82, m 0.97). */
const CLASSES: readonly (readonly [RegExp, number])[] = [
  [/[ ijl.,:;'|!/]/, 0.34],
  [/[ftr()\-[\]]/, 0.42],
  [/[a-z0-9]/, 0.64],
  [/[A-LN-VX-Z]/, 0.78],
];
/** M, W, @, …, → and anything not classed: a full em; lowercase m and w are wide letters of their own. */
const WIDE = 1;
const LOWER_WIDE: Record<string, number> = { w: 0.82, m: 0.98 };

export function textWidthPx(text: string, fontPx: number): number {
  let em = 0;
  for (const ch of text) em += LOWER_WIDE[ch] ?? CLASSES.find(([re]) => re.test(ch))?.[1] ?? WIDE;
  return em * fontPx;
}

/** The longest start of `text` that fits `maxPx`, cut with `…`; the text itself when it fits, '' when not even `…`. */
export function fitText(text: string, maxPx: number, fontPx: number): string {
  if (textWidthPx(text, fontPx) <= maxPx) return text;
  const room = maxPx - textWidthPx('…', fontPx);
  if (room < 0) return '';
  let cut = '';
  for (const ch of text) {
    if (textWidthPx(cut + ch, fontPx) > room) break;
    cut += ch;
  }
  return `${cut.trimEnd()}…`;
}
