/**
 * ChartData → a Vega-Lite spec (pure; rendered by tools/charts/render.ts). Five panels on one time axis (UTC,
 * labelled at the top and the bottom in one format: tools/charts/time-format.ts):
 *   1. marks: decisions, alerts and actions (control changes), one row each, every mark labelled
 *      (tools/charts/marks-panel.ts);
 *   2. the score: raw (bucket mean, thin) and smoothed (bold), over the band the loop published per
 *      period (background shading) and the band thresholds (dashed rules at 80 and 50); a rule at each
 *      decision, under its labelled mark in panel 1;
 *   3. volume and errors: requests per minute, the errors among them in red (tools/charts/traffic-panel.ts);
 *   4. refusal rates — hard blocks, challenges, soft blocks as % of requests — with each one's normal
 *      (the day's 14-day baseline) as a dashed segment of the same colour;
 *   5. p95 latency and its normal.
 */
import type { TopLevelSpec } from 'vega-lite';
import { DEFAULT_SCORING_CONFIG } from '../../core/scoring/config';
import { marksPanel } from './marks-panel';
import { describeBucket } from './resolution';
import { timeX, utcMinute } from './time-format';
import { trafficPanel } from './traffic-panel';
import type { ChartData } from './types';

const DAY = 86_400_000;
export const CHART_WIDTH = 1000;
/** DejaVu Sans is what Debian-based machines have; resvg falls back to any sans-serif face. */
const FONT = 'DejaVu Sans, Arial, sans-serif';

/** Band colours: the traffic-light reading an on-call person expects. */
export const BAND_COLOURS: Record<string, string> = {
  learning: '#9e9e9e',
  healthy: '#2e7d32',
  degrading: '#f9a825',
  resisting: '#c62828',
  stopped: '#424242',
};
export const SIGNAL_COLOURS: Record<string, string> = {
  'hard blocks': '#c62828',
  challenges: '#6a1b9a',
  'soft blocks': '#ef6c00',
};
const pct = (r: number | null): number | null => (r === null ? null : Math.round(r * 10_000) / 100);

export function buildChartSpec(data: ChartData): TopLevelSpec {
  const { healthyMin, resistingBelow } = bandThresholds();
  // The period is fixed on each panel's first layer only: the others share its scale (giving it on every
  // layer makes Vega-Lite merge identical domains and warn about each). Only the top and bottom panels label
  // their axis; the ones between keep its grid.
  const xd = timeX(data.from, data.to, { orient: 'bottom', labels: false });
  const x = { field: 't', type: 'temporal' as const, title: null };
  const rawRows = data.scores.flatMap((b) =>
    b.meanScore === null ? [] : [{ t: b.t, value: Math.round(b.meanScore * 10) / 10 }],
  );
  const smoothedRows = data.scores.flatMap((b) =>
    b.smoothedScore === null ? [] : [{ t: b.t, value: Math.round(b.smoothedScore * 10) / 10 }],
  );
  const rateRows = data.rates.flatMap((b) =>
    b.requests === 0
      ? []
      : [
          { t: b.t, signal: 'hard blocks', value: pct(b.hardBlocks / b.requests) },
          { t: b.t, signal: 'challenges', value: pct(b.challenges / b.requests) },
          { t: b.t, signal: 'soft blocks', value: pct(b.softBlocks / b.requests) },
        ],
  );
  // Baselines are per UTC day, clipped to the period: one dashed segment per day and signal.
  const clip = (day: number): { t: number; t2: number } => ({
    t: Math.max(day, data.from),
    t2: Math.min(day + DAY, data.to),
  });
  const baselineRows = data.baselines.flatMap((d) =>
    (
      [
        ['hard blocks', d.hardBlockRate],
        ['challenges', d.challengeRate],
        ['soft blocks', d.softBlockRate],
      ] as const
    ).flatMap(([signal, rate]) => (rate === null ? [] : [{ ...clip(d.day), signal, value: pct(rate) }])),
  );
  const latencyRows = data.rates.flatMap((b) =>
    b.p95LatencyMs === null ? [] : [{ t: b.t, value: Math.round(b.p95LatencyMs) }],
  );
  const latencyBaselineRows = data.baselines.flatMap((d) =>
    d.p95LatencyMs === null ? [] : [{ ...clip(d.day), value: Math.round(d.p95LatencyMs) }],
  );
  const bandRows = data.bands.map((p) => ({ t: p.from, t2: p.to, band: p.band }));
  const decisionRows = data.marks.flatMap((m) => (m.kind === 'decision' ? m.events.map((e) => ({ t: e.t })) : []));
  const signalScale = { domain: Object.keys(SIGNAL_COLOURS), range: Object.values(SIGNAL_COLOURS) };

  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `${data.site} — ${utcMinute(data.from)} to ${utcMinute(data.to)} UTC`,
      subtitle: [
        `all times UTC; ${describeBucket(data.resolution.bucketMs)} buckets (signals from ` +
          `${data.resolution.level} rollups, scores from assessments)`,
        'score: grey = bucket mean, blue = smoothed; shading = the band the loop published; dashed = the 14-day normal',
        ...(data.note === undefined ? [] : [data.note]),
      ],
    },
    config: {
      font: FONT,
      // Vega-Lite's own descriptions write times in the machine's zone; the marks carry their own (UTC).
      aria: false,
      view: { stroke: '#e0e0e0' },
      axis: { labelFontSize: 11, titleFontSize: 11 },
      legend: { labelFontSize: 11, titleFontSize: 11 },
    },
    background: 'white',
    spacing: 12,
    vconcat: [
      marksPanel(data, CHART_WIDTH),
      {
        name: 'score',
        width: CHART_WIDTH,
        height: 220,
        layer: [
          {
            data: { values: bandRows },
            mark: { type: 'rect', opacity: 0.18 },
            encoding: {
              x: xd,
              x2: { field: 't2' },
              color: {
                field: 'band',
                type: 'nominal',
                title: 'band (the loop)',
                scale: { domain: Object.keys(BAND_COLOURS), range: Object.values(BAND_COLOURS) },
              },
            },
          },
          {
            data: {
              values: [
                { y: healthyMin, zone: 'healthy ≥' },
                { y: resistingBelow, zone: 'resisting <' },
              ],
            },
            mark: { type: 'rule', strokeDash: [4, 4], color: '#757575' },
            encoding: { y: { field: 'y', type: 'quantitative' } },
          },
          {
            data: { values: rawRows },
            mark: { type: 'line', color: '#90a4ae', strokeWidth: 1 },
            encoding: { x, y: { field: 'value', type: 'quantitative', title: 'score', scale: { domain: [0, 100] } } },
          },
          {
            data: { values: smoothedRows },
            mark: { type: 'line', color: '#0d47a1', strokeWidth: 2.5 },
            encoding: { x, y: { field: 'value', type: 'quantitative' } },
          },
          {
            data: { values: decisionRows },
            mark: { type: 'rule', color: '#000000', strokeWidth: 1 },
            encoding: { x },
          },
        ],
      },
      trafficPanel(data, CHART_WIDTH),
      {
        name: 'refusals',
        width: CHART_WIDTH,
        height: 150,
        layer: [
          {
            data: { values: rateRows },
            mark: { type: 'line', strokeWidth: 1.5 },
            encoding: {
              x: xd,
              y: { field: 'value', type: 'quantitative', title: '% of requests' },
              color: { field: 'signal', type: 'nominal', title: 'signal', scale: signalScale },
            },
          },
          {
            data: { values: baselineRows },
            mark: { type: 'rule', strokeDash: [6, 3], strokeWidth: 1.5, opacity: 0.8 },
            encoding: {
              x,
              x2: { field: 't2' },
              y: { field: 'value', type: 'quantitative' },
              color: { field: 'signal', type: 'nominal', scale: signalScale },
            },
          },
        ],
      },
      {
        name: 'latency',
        width: CHART_WIDTH,
        height: 110,
        layer: [
          {
            data: { values: latencyRows },
            mark: { type: 'line', color: '#00695c', strokeWidth: 1.5 },
            encoding: {
              x: timeX(data.from, data.to, { orient: 'bottom', labels: true }),
              y: { field: 'value', type: 'quantitative', title: 'latency p95 (ms)' },
            },
          },
          {
            data: { values: latencyBaselineRows },
            mark: { type: 'rule', color: '#00695c', strokeDash: [6, 3], strokeWidth: 1.5, opacity: 0.8 },
            encoding: { x, x2: { field: 't2' }, y: { field: 'value', type: 'quantitative' } },
          },
        ],
      },
    ],
    resolve: { scale: { color: 'independent' } },
  };
}

/** The default band thresholds, drawn as the zones' edges (the loop judges the smoothed score on them). */
function bandThresholds(): { healthyMin: number; resistingBelow: number } {
  const b = DEFAULT_SCORING_CONFIG.bands;
  return { healthyMin: b.healthyMin, resistingBelow: b.degradingMin };
}
