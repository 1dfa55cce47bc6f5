/**
 * Numbers as pages print them: "$139.95", "1,299.00", "1.299,00 €", "EUR 12", "-3.5 %". The first
 * number-looking run is read:
 * - two different separators ("1,299.00", "1.299,00"): the last one is the decimal point;
 * - one kind repeated ("1,299,000"): thousands separators;
 * - one separator followed by exactly three digits after a non-zero integer part ("1,299", "12.500"):
 *   thousands (the way prices print); otherwise a decimal point ("19.99", "0.125", "4,5").
 * Ambiguous texts are the reason `matches` exists: use it when the exact text matters.
 */
export function parseDisplayedNumber(text: string): number | undefined {
  const match = /[-−]?\d[\d.,\u00a0\u202f' ]*/.exec(text);
  if (!match) return undefined;
  const negative = /^[-−]/.test(match[0]);
  const run = trimTrailingSeparators(match[0].replace(/^[-−]/, '').replace(/[\u00a0\u202f' ]/g, ''));
  const separators = run.replace(/\d/g, '');
  let normalised: string;
  if (separators === '') {
    normalised = run;
  } else if (new Set(separators).size > 1) {
    const last = Math.max(run.lastIndexOf('.'), run.lastIndexOf(','));
    normalised = `${run.slice(0, last).replace(/[.,]/g, '')}.${run.slice(last + 1)}`;
  } else if (separators.length > 1) {
    normalised = run.replace(/[.,]/g, '');
  } else {
    const [integer = '', fraction = ''] = run.split(/[.,]/);
    const thousands = fraction.length === 3 && integer.length <= 3 && !/^0+$/.test(integer);
    normalised = thousands ? `${integer}${fraction}` : `${integer}.${fraction}`;
  }
  const value = Number(normalised);
  if (!Number.isFinite(value)) return undefined;
  return negative ? -value : value;
}

/**
 * The run without its trailing "." and ",". A loop, not `/[.,]+$/`: that regex restarts at every
 * separator of a long run like "1.,.,.,…" and takes quadratic time (5 s for 40 KB of page text).
 */
function trimTrailingSeparators(run: string): string {
  let end = run.length;
  while (end > 0 && (run[end - 1] === '.' || run[end - 1] === ',')) end -= 1;
  return run.slice(0, end);
}
