/**
 * A score trend in one line of the terminal: `▁▂▃▄▅▆▇█`, one character per point.
 *
 * Hand-written rather than a library: the npm ones (sparkly, sparkline, node-sparkline) are not in the
 * shared install, sparkly is ESM-only (this CLI is CommonJS), and none both pins the scale and leaves a
 * gap for a missing point. Both matter here: the scale is the score's own 0–100 (a flat 98 is a full
 * bar, not noise stretched to fill the range, and two sites' lines compare), and a stretch without a
 * score (learning, too little traffic, no tick) is a dot, not a made-up zero (▁ is a score near 0).
 */

export const SPARK_BARS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const;
/** What a point without a value shows. */
export const SPARK_GAP = '·';

export interface SparkScale {
  min: number;
  max: number;
}

/** The health score's range. */
export const SCORE_SCALE: SparkScale = { min: 0, max: 100 };

/**
 * One bar per value on a fixed scale (values outside it are clamped; null, NaN → a gap). The lowest bar
 * is the scale's bottom eighth, the highest its top eighth: 0–12.5 → ▁ … 87.5–100 → █ on 0–100.
 */
export function sparkline(values: ReadonlyArray<number | null>, scale: SparkScale = SCORE_SCALE): string {
  if (!(scale.max > scale.min))
    throw new RangeError(`sparkline: scale max ${scale.max} must be above min ${scale.min}`);
  const top = SPARK_BARS.length - 1;
  return values
    .map((v) => {
      if (v === null || !Number.isFinite(v)) return SPARK_GAP;
      const f = (Math.min(scale.max, Math.max(scale.min, v)) - scale.min) / (scale.max - scale.min);
      return SPARK_BARS[Math.min(top, Math.floor(f * SPARK_BARS.length))]!;
    })
    .join('');
}
