/**
 * The volume and errors panel (pure Vega-Lite): one bar per bucket, as tall as the requests per minute, its
 * lower part red for the errors per minute (network and proxy errors, 5xx and other error answers:
 * RateBucket.errors — one part, since the rollups count them in one column). One axis for both, so the red part
 * reads directly as errors per minute and its share of the bar as the share of requests that failed: forty
 * minutes of 503s are a red block where the grey was, and a crawl that stopped is a gap, not a flat line at the
 * score.
 */
import { trafficBuckets } from './series';
import { timeX } from './time-format';
import type { Panel } from './panel';
import type { ChartData } from './types';

export const TRAFFIC_COLOURS = { errors: '#d32f2f', other: '#b0bec5' } as const;
export const TRAFFIC_LAYERS = { errors: 'traffic_errors', other: 'traffic_other' } as const;
/** What the legend calls the two parts: the grey part holds refusals too (they are answers, not errors). */
const PARTS = { errors: 'errors', other: 'other requests' } as const;

const round1 = (n: number): number => Math.round(n * 10) / 10;

export function trafficPanel(data: ChartData, width: number): Panel {
  const buckets = trafficBuckets(data.rates, data.from, data.to, data.resolution);
  const errors = buckets.flatMap((b) =>
    b.errorsPerMinute === 0 ? [] : [{ t: b.t, t2: b.t2, y: 0, y2: round1(b.errorsPerMinute), part: PARTS.errors }],
  );
  const other = buckets.flatMap((b) =>
    b.requestsPerMinute === b.errorsPerMinute
      ? []
      : [{ t: b.t, t2: b.t2, y: round1(b.errorsPerMinute), y2: round1(b.requestsPerMinute), part: PARTS.other }],
  );
  const colour = {
    field: 'part',
    type: 'nominal' as const,
    title: 'requests per minute',
    scale: { domain: [PARTS.errors, PARTS.other], range: [TRAFFIC_COLOURS.errors, TRAFFIC_COLOURS.other] },
  };
  const x = { field: 't', type: 'temporal' as const };
  // A thin outline in the bar's own colour closes the hairline seams anti-aliasing leaves between adjacent bars.
  const bar = { type: 'rect' as const, strokeWidth: 0.5 };
  return {
    name: 'traffic',
    width,
    height: 110,
    layer: [
      {
        name: TRAFFIC_LAYERS.other,
        data: { values: other },
        mark: bar,
        encoding: {
          x: timeX(data.from, data.to, { orient: 'bottom', labels: false }),
          x2: { field: 't2' },
          y: {
            field: 'y',
            type: 'quantitative',
            title: ['requests / min', 'red: errors'],
            scale: { domainMin: 0 },
          },
          y2: { field: 'y2' },
          color: colour,
          stroke: { ...colour, legend: null },
        },
      },
      {
        name: TRAFFIC_LAYERS.errors,
        data: { values: errors },
        mark: bar,
        encoding: {
          x,
          x2: { field: 't2' },
          y: { field: 'y', type: 'quantitative' },
          y2: { field: 'y2' },
          color: colour,
          stroke: { ...colour, legend: null },
        },
      },
    ],
  };
}
