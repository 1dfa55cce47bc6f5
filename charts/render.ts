/**
 * Vega-Lite spec → SVG (Vega's headless View, no browser, no canvas) → PNG (resvg). Vega and Vega-Lite
 * are ES modules: loaded with import() on first use, so only `chart` pays for them.
 */
import type { TopLevelSpec } from 'vega-lite';

/** PNGs are drawn at twice the SVG's size: sharp on high-density screens and in Markdown previews. */
export const PNG_SCALE = 2;

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vl, vega] = await Promise.all([import('vega-lite'), import('vega')]);
  const compiled = vl.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logLevel: vega.Warn });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, { fitTo: { mode: 'zoom', value: PNG_SCALE }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } });
  return resvg.render().asPng();
}
