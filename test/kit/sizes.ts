/**
 * How many cases a property or fuzz test tries. `npm test` (and CI) run the full count; the inner loop's
 * `npm run test:quick` (TH_QUICK=1) runs the same properties on a tenth of their cases, so it answers in
 * about a minute while still exercising every property once per change.
 */
export const QUICK = process.env.TH_QUICK === '1';

/** `full` cases, or a tenth of them (at least 20) in the quick tier. */
export function runs(full: number): number {
  return QUICK ? Math.max(20, Math.round(full / 10)) : full;
}
