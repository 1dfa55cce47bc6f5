/**
 * Reading a rendered chart back: the real SVG (tools/charts/render.ts), parsed, its marks found by the layer
 * names Vega-Lite gives their groups (`<layer name>_marks`), positions read from Vega's transforms and paths.
 * Positions are relative to each panel's plot area, as the spec's scales place them.
 */
import { load, type CheerioAPI } from 'cheerio';
import { renderSvg } from '../../../tools/charts/render';
import { buildChartSpec } from '../../../tools/charts/spec';
import type { ChartData } from '../../../tools/charts/types';

export async function renderChart(data: ChartData): Promise<CheerioAPI> {
  return load(await renderSvg(buildChartSpec(data)), { xml: true });
}

function translate(el: { attribs: Record<string, string> }): { x: number; y: number } {
  const m = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(el.attribs.transform ?? '');
  if (m === null) throw new Error(`no translate in ${el.attribs.transform}`);
  return { x: Number(m[1]), y: Number(m[2]) };
}

export interface DrawnText {
  /** The element's own text, without its tooltip. */
  text: string;
  x: number;
  y: number;
  /** The `<title>` (tooltip), or null. */
  title: string | null;
}

export type DrawnPoint = Omit<DrawnText, 'text'>;

/** The layer's elements of one tag, each with its place and its tooltip. */
function placed($: CheerioAPI, layer: string, tag: string): (DrawnPoint & { own: string })[] {
  return $(`g.${layer}_marks > ${tag}`)
    .toArray()
    .map((el) => {
      const title = $(el).children('title');
      const own = $(el)
        .contents()
        .filter((_, n) => n.nodeType === 3) // text nodes: the label, not its <title>
        .text();
      return { own, ...translate(el), title: title.length === 0 ? null : title.text() };
    });
}

export function texts($: CheerioAPI, layer: string): DrawnText[] {
  return placed($, layer, 'text').map(({ own, ...p }) => ({ text: own, ...p }));
}

export function points($: CheerioAPI, layer: string): DrawnPoint[] {
  return placed($, layer, 'path').map(({ own: _own, ...p }) => p);
}

export interface DrawnRect {
  x: number;
  y: number;
  width: number;
  height: number;
  fill: string;
}

/** Vega writes a rect as `M x,y h w v h h -w Z`. */
export function rects($: CheerioAPI, layer: string): DrawnRect[] {
  return $(`g.${layer}_marks > path`)
    .toArray()
    .map((el) => {
      const m = /^M([-\d.e]+),([-\d.e]+)h([-\d.e]+)v([-\d.e]+)h/.exec(el.attribs.d ?? '');
      if (m === null) throw new Error(`not a rect: ${el.attribs.d}`);
      return { x: Number(m[1]), y: Number(m[2]), width: Number(m[3]), height: Number(m[4]), fill: el.attribs.fill! };
    });
}

/** Each time axis's labels, in order: the lines of each label (`['22:00', '2026-11-24']`). */
export function timeAxisLabels($: CheerioAPI): string[][][] {
  return $('g.role-axis')
    .toArray()
    .filter((axis) => $(axis).find('g.role-axis-label tspan').length > 0)
    .map((axis) =>
      $(axis)
        .find('g.role-axis-label > text')
        .toArray()
        .map((t) =>
          $(t)
            .children('tspan')
            .toArray()
            .map((s) => $(s).text()),
        ),
    );
}
