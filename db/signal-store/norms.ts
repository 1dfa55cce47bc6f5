/**
 * Per-site classification context, cached: the site's classifier settings (sites.config.classifier)
 * and its size / records norms per page type over the last 14 days. Norms move slowly, so a few
 * minutes of staleness is fine and saves a query per batch.
 */
import { compileClassifier, type Classifier, type Norms } from '../../signals/classify';
import { parseSiteClassifierConfig } from '../../signals/config';
import { BYTES_HISTOGRAM, quantile } from '../../signals/histogram';
import type { Pool } from '../pool';

export interface SiteContext {
  classifier: Classifier;
  norms: Map<string, Norms>;
  loadedAt: number;
}

export interface ClassificationContextCache {
  get(site: string): Promise<SiteContext>;
  invalidate(site?: string): void;
}

const NORM_DAYS = 14;

export function createContextCache(pool: Pool, ttlMs = 5 * 60_000, now: () => number = Date.now): ClassificationContextCache {
  const cache = new Map<string, SiteContext>();
  const loading = new Map<string, Promise<SiteContext>>();
  const defaultClassifier = compileClassifier({});

  async function load(site: string): Promise<SiteContext> {
    const [config, norms] = await Promise.all([
      pool.query<{ classifier: unknown }>("SELECT config -> 'classifier' AS classifier FROM sites WHERE site = $1", [site]),
      pool.query<{ page_type: string; responses: string; with_records: string; extractions: string; bytes_hist: number[] | null }>(
        `SELECT page_type, sum(responses) AS responses, sum(with_records) AS with_records, sum(extractions) AS extractions,
                th_hist_sum(bytes_hist) AS bytes_hist
         FROM page_norms_day WHERE site = $1 AND day >= (now() AT TIME ZONE 'UTC')::date - $2::int
         GROUP BY page_type`,
        [site, NORM_DAYS],
      ),
    ]);
    const raw = config.rows[0]?.classifier;
    let classifier = defaultClassifier;
    if (raw !== undefined && raw !== null) {
      const parsed = parseSiteClassifierConfig(raw);
      // A bad stored config was refused when it was set; if one slipped in, classify with defaults
      // rather than refusing the site's traffic.
      if (parsed.ok) classifier = compileClassifier(parsed.config);
    }
    const byType = new Map<string, Norms>();
    for (const r of norms.rows) {
      const responses = Number(r.responses);
      const extractions = Number(r.extractions);
      const median = r.bytes_hist ? quantile(BYTES_HISTOGRAM, r.bytes_hist, 0.5) : undefined;
      byType.set(r.page_type, {
        ...(median !== undefined && responses > 0 ? { sizeNorm: { medianBytes: median, samples: responses } } : {}),
        ...(extractions > 0 ? { recordsNorm: { usualRecordsRate: Number(r.with_records) / extractions, samples: extractions } } : {}),
      });
    }
    return { classifier, norms: byType, loadedAt: now() };
  }

  return {
    async get(site) {
      const hit = cache.get(site);
      if (hit && now() - hit.loadedAt < ttlMs) return hit;
      let pending = loading.get(site);
      if (!pending) {
        pending = load(site).finally(() => loading.delete(site));
        loading.set(site, pending);
      }
      const ctx = await pending;
      cache.set(site, ctx);
      return ctx;
    },
    invalidate(site) {
      if (site === undefined) cache.clear();
      else cache.delete(site);
    },
  };
}
