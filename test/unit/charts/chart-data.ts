/** Builders the chart tests share: controls as the loop stores them, and a minute-level ChartData. */
import { actionPolicySchema, nominalControls, type Controls } from '../../../core/control/controls';
import type { ChartData, ChartMark, RateBucket } from '../../../tools/charts/types';

const M = 60_000;

/** The loop's nominal controls under the default policy (concurrency 16), with `o` changed. */
export const controls = (o: Partial<Controls> = {}): Controls => ({
  ...nominalControls(actionPolicySchema().parse({}), 'healthy', 'healthy'),
  ...o,
});

/** One minute of the all-routes rollup. */
export const minute = (t: number, requests: number, errors: number): RateBucket => ({
  t,
  requests,
  hardBlocks: 0,
  challenges: 0,
  softBlocks: 0,
  errors,
  p95LatencyMs: 250,
});

/** Six hours at one-minute buckets from `from`, healthy throughout, with the given traffic and marks. */
export function minuteChart(from: number, rates: RateBucket[], marks: ChartMark[] = []): ChartData {
  const to = from + 360 * M;
  return {
    site: 'shop.example.com',
    from,
    to,
    resolution: { level: 'minute', bucketMs: M },
    scores: Array.from({ length: 360 }, (_, i) => ({
      t: from + i * M,
      meanScore: 90,
      minScore: 90,
      smoothedScore: 90,
      ticks: 1,
    })),
    rates,
    baselines: [],
    bands: [{ from, to, band: 'healthy' }],
    marks,
  };
}
