/**
 * Vega-Lite spec → SVG (Vega's headless View, no browser, no canvas; tooltips added as `<title>`s:
 * tools/charts/svg-titles.ts) → PNG (resvg). Vega and Vega-Lite are ES modules: loaded with import() on first
 * use, so only `chart` pays for them.
 */
import type { TopLevelSpec } from 'vega-lite';
import { withTitles } from './svg-titles';

/** PNGs are drawn at twice the SVG's size: sharp on high-density screens and in Markdown previews. */
export const PNG_SCALE = 2;

interface Logger {
  level(): number;
  info(): Logger;
  warn(): Logger;
  debug(): Logger;
  error(...args: unknown[]): Logger;
}

/** Vega-Lite's logger interface, errors only (thrown: a spec that does not compile is a bug). */
const quietLogger: Logger = {
  level(): number {
    return 0;
  },
  info(): Logger {
    return quietLogger;
  },
  warn(): Logger {
    return quietLogger;
  },
  debug(): Logger {
    return quietLogger;
  },
  error(...args: unknown[]): Logger {
    throw new Error(`Vega-Lite: ${args.map(String).join(' ')}`);
  },
};

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vl, vega] = await Promise.all([import('vega-lite'), import('vega')]);
  // Vega-Lite's warnings would go to the user's terminal; the spec is ours, so its unit tests hold it.
  const compiled = vl.compile(spec, { logger: quietLogger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logLevel: vega.Error });
  try {
    return withTitles(await view.toSVG());
  } finally {
    view.finalize();
  }
}

export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: PNG_SCALE },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}
