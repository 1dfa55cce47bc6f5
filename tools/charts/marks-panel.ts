/**
 * The marks panel (pure Vega-Lite): one row per kind — decisions, alerts, actions (control changes) — each of
 * as many lanes as its labels need (tools/charts/mark-layout.ts). Every stored event is a point; a run of
 * control changes is underlined from its first step to its last; each mark, or each tight cluster of marks, has
 * its label beside it. Points and labels carry their full text as a description, which the rendered SVG keeps
 * as a tooltip (tools/charts/svg-titles.ts). The row names stand at the left, so the legend is not needed.
 */
import { LABEL_DX, LABEL_FONT_PX, layoutMarks } from './mark-layout';
import { timeX } from './time-format';
import type { Panel } from './panel';
import type { ChartData, MarkKind } from './types';

export const MARK_KINDS: readonly MarkKind[] = ['decision', 'alert', 'control change'];
export const MARK_ROW_TITLES: Record<MarkKind, string> = {
  decision: 'decisions',
  alert: 'alerts',
  'control change': 'actions',
};
export const MARK_COLOURS: Record<MarkKind, string> = {
  decision: '#000000',
  alert: '#c62828',
  'control change': '#1565c0',
};
const MARK_SHAPES: Record<MarkKind, string> = { decision: 'diamond', alert: 'triangle-up', 'control change': 'circle' };

const LANE_PX = 14;
const ROW_GAP_PX = 6;
const PAD_PX = 4;

/** Vega-Lite names the marks of a layer `<name>_marks`: tests and the SVG post-processing find them by it. */
export const MARK_LAYERS = { points: 'mark_points', labels: 'mark_labels', runs: 'mark_runs' } as const;

export function marksPanel(data: ChartData, width: number): Panel {
  const { labels, lanes } = layoutMarks(data.marks, MARK_KINDS, data.from, data.to, width);
  // Each kind's lanes, top to bottom, and a thin rule between the rows.
  const rowTop = {} as Record<MarkKind, number>;
  let y = PAD_PX;
  const separators: { y: number }[] = [];
  for (const kind of MARK_KINDS) {
    if (y > PAD_PX) separators.push({ y: y - ROW_GAP_PX / 2 });
    rowTop[kind] = y;
    y += lanes[kind] * LANE_PX + ROW_GAP_PX;
  }
  const height = y - ROW_GAP_PX + PAD_PX;
  const laneY = (kind: MarkKind, lane: number): number => rowTop[kind] + (lane + 0.5) * LANE_PX;

  const points = labels.flatMap((l) =>
    l.marks.flatMap((m) => m.events.map((e) => ({ t: e.t, y: laneY(l.kind, l.lane), kind: l.kind, text: e.text }))),
  );
  const runs = labels.flatMap((l) =>
    l.marks.flatMap((m) =>
      m.until === null ? [] : [{ t: m.t, t2: m.until, y: laneY(l.kind, l.lane) + 5, kind: l.kind }],
    ),
  );
  const texts = labels.map((l) => ({
    t: l.anchorT,
    y: laneY(l.kind, l.lane),
    kind: l.kind,
    text: l.text,
    tip: l.tooltip,
  }));
  const titles = MARK_KINDS.map((kind) => ({
    t: data.from,
    y: rowTop[kind] + (lanes[kind] * LANE_PX) / 2,
    text: MARK_ROW_TITLES[kind],
  }));

  // y is in pixels from the panel's top: the layout decided every lane's place.
  const yPx = {
    field: 'y',
    type: 'quantitative' as const,
    axis: null,
    scale: { domain: [0, height], range: [0, height] },
  };
  const kindColour = {
    field: 'kind',
    type: 'nominal' as const,
    legend: null,
    scale: { domain: [...MARK_KINDS], range: MARK_KINDS.map((k) => MARK_COLOURS[k]) },
  };
  const x = { field: 't', type: 'temporal' as const };
  return {
    name: 'marks',
    width,
    height,
    layer: [
      {
        // The row names, at the period's start; this layer also fixes the panel's time axis (at the top).
        data: { values: titles },
        mark: { type: 'text', align: 'right', baseline: 'middle', dx: -8, fontSize: 11, fontWeight: 'bold' },
        encoding: { x: timeX(data.from, data.to, { orient: 'top', labels: true }), y: yPx, text: { field: 'text' } },
      },
      {
        data: { values: separators },
        mark: { type: 'rule', color: '#e0e0e0', strokeWidth: 1 },
        encoding: { y: yPx },
      },
      {
        name: MARK_LAYERS.runs,
        data: { values: runs },
        mark: { type: 'rule', strokeWidth: 2, opacity: 0.6 },
        encoding: { x, x2: { field: 't2' }, y: yPx, color: kindColour },
      },
      {
        name: MARK_LAYERS.points,
        data: { values: points },
        mark: { type: 'point', filled: true, size: 50, opacity: 0.9, aria: true },
        encoding: {
          x,
          y: yPx,
          color: kindColour,
          shape: {
            field: 'kind',
            type: 'nominal',
            legend: null,
            scale: { domain: [...MARK_KINDS], range: MARK_KINDS.map((k) => MARK_SHAPES[k]) },
          },
          description: { field: 'text' },
        },
      },
      {
        name: MARK_LAYERS.labels,
        data: { values: texts },
        mark: {
          type: 'text',
          align: 'left',
          baseline: 'middle',
          dx: LABEL_DX,
          fontSize: LABEL_FONT_PX,
          aria: true,
        },
        encoding: { x, y: yPx, text: { field: 'text' }, color: kindColour, description: { field: 'tip' } },
      },
    ],
  };
}
