/**
 * The Site page's chart, drawn once per distinct chart. Drawing with Vega is most of the page's server time
 * (docs/console.md, "Speed"); a reload that reads the same data (no tick, decision, control change, alert or
 * traffic since) would draw the very same SVG. So the SVG is kept under a hash of the whole spec it is drawn
 * from — range, scores, traffic, bands, marks: any change to any of them is another key, so nothing needs
 * invalidating and nothing stale can be shown. The data is still read at every request (a small part).
 * Bounded by the SVGs' total size, the least recently used dropped first; one per API process.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../../tools/charts/render';

/** A day's chart is ~100–300 kB of SVG: a few dozen charts. */
const MAX_BYTES = 16 * 1024 * 1024;

export class ChartCache {
  private readonly svgs: LRUCache<string, string>;
  /** Drawings under way, so concurrent identical requests draw once. */
  private readonly drawing = new Map<string, Promise<string>>();
  hits = 0;
  draws = 0;

  constructor(
    maxBytes = MAX_BYTES,
    private readonly draw: (spec: TopLevelSpec) => Promise<string> = renderSvg,
  ) {
    this.svgs = new LRUCache({ maxSize: maxBytes, sizeCalculation: (svg) => Math.max(1, svg.length) });
  }

  /** Forgets every chart (the benchmark's cold figures). */
  clear(): void {
    this.svgs.clear();
  }

  async svg(spec: TopLevelSpec): Promise<string> {
    const key = createHash('sha256').update(JSON.stringify(spec)).digest('base64');
    const kept = this.svgs.get(key);
    if (kept !== undefined) {
      this.hits++;
      return kept;
    }
    const under = this.drawing.get(key);
    if (under !== undefined) return under;
    this.draws++;
    const drawn = this.draw(spec)
      .then((svg) => {
        this.svgs.set(key, svg);
        return svg;
      })
      .finally(() => this.drawing.delete(key));
    this.drawing.set(key, drawn);
    return drawn;
  }
}

/** The API process's cache (the console's routes are registered once per process). */
export const siteCharts = new ChartCache();
