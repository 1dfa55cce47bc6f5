/**
 * Where each mark's label goes (pure): every kind of mark has its own row of up to MAX_LANES lanes, and a label
 * takes the first lane where it does not run into what is drawn before it. A label starts right of its last
 * point (a run of control changes: its last step), so it never covers its own marks. Marks of a kind at the same
 * spot (within CLUSTER_PX) share a label, `alert: resisting, paused`. Where every lane is taken, the lane whose
 * label started first gives way: that label is cut to end in time (`throt…`) when that leaves it MIN_ROOM_PX;
 * when not, the marks join the label just before them (`alert: resisting +2`). Either way no two labels overlap
 * and every mark is named by a label or, cut, in its tooltip, which keeps every full text.
 *
 * Positions are the chart's own: a time's x is its share of the period times the panel's width, as Vega's scale
 * places it.
 */
import { fitText, textWidthPx } from './text-width';
import type { ChartMark, MarkKind } from './types';

export const LABEL_FONT_PX = 10;
/** The label starts this far right of its mark's point. */
export const LABEL_DX = 7;
export const MAX_LANES = 4;
/** Marks closer than this are one spot on the chart. */
const CLUSTER_PX = 8;
/** A label cut shorter than this (three letters and `…`) says nothing: its neighbour joins it instead. */
const MIN_ROOM_PX = 30;
/** The point's half-width: a lane is taken from just left of it. */
const POINT_PX = 4;
/** Clear space between one label's end and the next mark. */
const GAP_PX = 6;
/** The longest label, so one note does not take a lane across the chart. */
const MAX_LABEL_PX = 220;
/** How far past the plot's right edge a label may run (into the chart's padding). */
const OVERHANG_PX = 60;

export interface PlacedLabel {
  kind: MarkKind;
  /** 0 is the row's top lane. */
  lane: number;
  /** The first mark's time and x (px from the plot's left edge). */
  t: number;
  x: number;
  /** Where the text starts, LABEL_DX right of it: the last point's (or run's end's) time and x. */
  anchorT: number;
  anchorX: number;
  /** What is drawn: the short label, cut to fit, `+N` for the marks sharing it. */
  text: string;
  /** Every mark's full label, one a line. */
  tooltip: string;
  marks: ChartMark[];
}

interface Lane {
  /** Where the lane is free again (px). */
  end: number;
  last: PlacedLabel;
}

/** `alert: resisting` then `alert: paused` → `paused`: a prefix the label before has is not said twice. */
function withoutRepeatedPrefix(short: string, before: string | undefined): string {
  const prefix = /^[^:]+: /.exec(short)?.[0];
  return prefix !== undefined && before?.startsWith(prefix) ? short.slice(prefix.length) : short;
}

/** The marks' short labels together when they fit `maxPx`, else the first one's and how many more. */
export function clusterText(marks: readonly ChartMark[], maxPx: number): string {
  const all = marks.map((m, i) => withoutRepeatedPrefix(m.short, marks[i - 1]?.short)).join(', ');
  if (marks.length === 1 || textWidthPx(all, LABEL_FONT_PX) <= maxPx) return all;
  return `${marks[0]!.short} +${marks.length - 1}`;
}

/** Marks of one kind in time order, grouped while each is within CLUSTER_PX of its group's first. */
function clusters(marks: readonly ChartMark[], px: (t: number) => number): ChartMark[][] {
  const out: ChartMark[][] = [];
  for (const m of marks) {
    const group = out[out.length - 1];
    if (group !== undefined && px(m.t) - px(group[0]!.t) < CLUSTER_PX) group.push(m);
    else out.push([m]);
  }
  return out;
}

/** Where a cluster's drawing ends: the end of its label, or of its last point when the label is empty. */
function extentOf(label: PlacedLabel): number {
  return Math.max(label.anchorX + POINT_PX, label.anchorX + LABEL_DX + textWidthPx(label.text, LABEL_FONT_PX));
}

function placeKind(
  kind: MarkKind,
  marks: readonly ChartMark[],
  px: (t: number) => number,
  width: number,
): PlacedLabel[] {
  const lanes: Lane[] = [];
  const placed: PlacedLabel[] = [];
  /** The label of `group` (anchored right of its last point), its text fitted to the room up to the right edge. */
  const labelOf = (group: ChartMark[], lane: number): PlacedLabel => {
    const anchorT = Math.max(...group.map((m) => m.until ?? m.t));
    const anchorX = px(anchorT);
    const room = Math.min(MAX_LABEL_PX, width + OVERHANG_PX - anchorX - LABEL_DX);
    return {
      kind,
      lane,
      t: group[0]!.t,
      x: px(group[0]!.t),
      anchorT,
      anchorX,
      text: fitText(clusterText(group, room), room, LABEL_FONT_PX),
      tooltip: group.map((m) => m.label).join('\n'),
      marks: group,
    };
  };
  for (const group of clusters(marks, px)) {
    const start = px(group[0]!.t) - POINT_PX;
    let lane = lanes.findIndex((l) => l.end + GAP_PX <= start);
    if (lane === -1 && lanes.length < MAX_LANES) lane = lanes.length;
    if (lane === -1) {
      // Every lane is taken here: the one whose label began first gives way if cutting it leaves it a word.
      const first = lanes.reduce((best, l, i) => (l.last.anchorX < lanes[best]!.last.anchorX ? i : best), 0);
      const prev = lanes[first]!.last;
      const room = start - GAP_PX - prev.anchorX - LABEL_DX;
      if (room >= MIN_ROOM_PX) {
        prev.text = fitText(prev.text, room, LABEL_FONT_PX);
        lane = first;
      } else {
        // Too crowded to cut: these marks join the label just before them, which now starts after them.
        const latest = placed.pop()!;
        const joined = labelOf([...latest.marks, ...group], latest.lane);
        placed.push(joined);
        lanes[joined.lane] = { end: extentOf(joined), last: joined };
        continue;
      }
    }
    const label = labelOf(group, lane);
    lanes[lane] = { end: extentOf(label), last: label };
    placed.push(label);
  }
  return placed;
}

export interface MarkLayout {
  labels: PlacedLabel[];
  /** Lanes each kind's row needs (at least one, so an empty row still shows it had nothing). */
  lanes: Record<MarkKind, number>;
}

export function layoutMarks(
  marks: readonly ChartMark[],
  kinds: readonly MarkKind[],
  from: number,
  to: number,
  width: number,
): MarkLayout {
  const px = (t: number): number => ((t - from) / (to - from)) * width;
  const labels: PlacedLabel[] = [];
  const lanes = {} as Record<MarkKind, number>;
  for (const kind of kinds) {
    const own = marks.filter((m) => m.kind === kind).sort((a, b) => a.t - b.t);
    const placed = placeKind(kind, own, px, width);
    labels.push(...placed);
    lanes[kind] = Math.max(1, ...placed.map((p) => p.lane + 1));
  }
  return { labels, lanes };
}
