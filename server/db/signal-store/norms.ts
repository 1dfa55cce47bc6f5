/**
 * Per-site classification context, cached per ingester: the site's classifier settings
 * (sites.config.classifier), and its per-day norm rows for the window of each UTC day it classifies
 * (norms-as-of.ts: the 14 days before that day).
 *
 * Why it can be cached: the rows of days before D change only when traffic of those days arrives late
 * or is backfilled. Such writes by this ingester drop the windows they fall in at once (`stored`), so
 * the next batch reads them again — a backfill fed through one ingester, batch after batch, classifies
 * each day against everything stored before it. Writes by other ingesters (the CLI's other worker
 * threads, other recorders) are seen when the entry is read again, after `ttlMs` (5 minutes). Live, the
 * window of today holds no writes of today, so a steady feed reads each site's norms once per 5 minutes.
 *
 * The classifiers are compiled from the site's settings and the deployment's marker catalogue
 * (`catalogue`, server/config/marker-catalogue.ts: re-read when its file changes): a cached classifier built
 * from an older catalogue is compiled again on its next use, so the events after a marker-file change
 * are classified with the new markers without waiting for the TTL.
 */
import {
  BUILT_IN_CATALOGUE,
  compileClassifier,
  type Classifier,
  type MarkerCatalogue,
  type Norms,
} from '@target-health/crawler/events/classify';
import { parseSiteClassifierConfig } from '@target-health/crawler/events/config';
import type { Pool } from '../pool';
import { DAY_MS, NORM_DAYS, normWindow, normsAsOf, type DayNorm } from './norms-as-of';

/** The norm rows of a site for the window of one day, and the norms they give as of that day. */
export interface NormWindow {
  /** Per page type, per-day rows as stored: at least the window's days (normsAsOf ignores the others). */
  rows: Map<string, DayNorm[]>;
  /** `normsAsOf(rows, day)`: what events of the day are classified against when nothing else is pending. */
  norms: Map<string, Norms>;
}

export interface ClassificationContextCache {
  /** The site's classifier, compiled from its settings. */
  classifier(site: string): Promise<Classifier>;
  /** The site's norm rows for classifying events of each of `days` (UTC day starts), by day. */
  windows(site: string, days: readonly number[]): Promise<Map<number, NormWindow>>;
  /** This ingester stored norm rows of (site, day): the windows that hold that day are read again. */
  stored(site: string, day: number): void;
  /** Forgets everything cached for a site (or every site). */
  invalidate(site?: string): void;
}

interface Entry<T> {
  value: T;
  loadedAt: number;
}

interface ClassifierEntry extends Entry<Classifier> {
  catalogue: MarkerCatalogue;
}

/** Entries kept before expired ones are swept (a backfill over many sites and days). */
const MAX_WINDOWS = 4_096;

export function createContextCache(
  pool: Pool,
  ttlMs = 5 * 60_000,
  now: () => number = Date.now,
  catalogue: () => MarkerCatalogue = () => BUILT_IN_CATALOGUE,
): ClassificationContextCache {
  const classifiers = new Map<string, ClassifierEntry>();
  const loadingClassifiers = new Map<string, { promise: Promise<Classifier>; catalogue: MarkerCatalogue }>();
  const windows = new Map<string, Entry<NormWindow>>();
  /** Window loads in flight; `stale` once a write lands in their days (their result is then not kept). */
  const loadingWindows = new Map<string, { promise: Promise<NormWindow>; stale: boolean }>();
  let defaults = { catalogue: catalogue(), classifier: compileClassifier({}, catalogue()) };
  /** The classifier of a site without settings, for `markers` (compiled once per catalogue). */
  const defaultClassifier = (markers: MarkerCatalogue): Classifier => {
    if (defaults.catalogue !== markers) defaults = { catalogue: markers, classifier: compileClassifier({}, markers) };
    return defaults.classifier;
  };
  const windowKey = (site: string, day: number) => `${site}\u0000${day}`;

  async function loadClassifier(site: string, markers: MarkerCatalogue): Promise<Classifier> {
    const { rows } = await pool.query<{ classifier: unknown }>(
      "SELECT config -> 'classifier' AS classifier FROM sites WHERE site = $1",
      [site],
    );
    const raw = rows[0]?.classifier;
    if (raw === undefined || raw === null) return defaultClassifier(markers);
    const parsed = parseSiteClassifierConfig(raw);
    // A bad stored config was refused when it was set; if one slipped in, classify with defaults
    // rather than refusing the site's traffic.
    return parsed.ok ? compileClassifier(parsed.config, markers) : defaultClassifier(markers);
  }

  /** The site's rows of `[from, to)`, per page type: one read for all the windows a batch lacks. */
  async function loadRows(site: string, from: number, to: number): Promise<Map<string, DayNorm[]>> {
    const { rows } = await pool.query<{
      page_type: string;
      day_ms: number;
      responses: string;
      with_records: string;
      extractions: string;
      bytes_hist: number[] | null;
    }>(
      `SELECT page_type, (extract(epoch FROM day) * 1000)::float8 AS day_ms, responses, with_records, extractions,
              bytes_hist
       FROM page_norms_day WHERE site = $1 AND day >= $2::date AND day < $3::date`,
      [site, isoDay(from), isoDay(to)],
    );
    const byType = new Map<string, DayNorm[]>();
    for (const r of rows) {
      let list = byType.get(r.page_type);
      if (!list) byType.set(r.page_type, (list = []));
      list.push({
        day: Number(r.day_ms),
        responses: Number(r.responses),
        withRecords: Number(r.with_records),
        extractions: Number(r.extractions),
        bytesHist: r.bytes_hist,
      });
    }
    return byType;
  }

  function sweep(): void {
    const t = now();
    for (const [key, entry] of windows) if (t - entry.loadedAt >= ttlMs) windows.delete(key);
    // Still full (a backfill touching thousands of site-days within minutes): drop the oldest.
    for (const key of windows.keys()) {
      if (windows.size <= MAX_WINDOWS / 2) break;
      windows.delete(key);
    }
  }

  return {
    async classifier(site) {
      const markers = catalogue();
      const hit = classifiers.get(site);
      if (hit && hit.catalogue === markers && now() - hit.loadedAt < ttlMs) return hit.value;
      let pending = loadingClassifiers.get(site);
      if (!pending || pending.catalogue !== markers) {
        const entry = { promise: loadClassifier(site, markers), catalogue: markers };
        entry.promise
          .finally(() => {
            if (loadingClassifiers.get(site) === entry) loadingClassifiers.delete(site);
          })
          .catch(() => undefined);
        loadingClassifiers.set(site, entry);
        pending = entry;
      }
      const value = await pending.promise;
      classifiers.set(site, { value, loadedAt: now(), catalogue: pending.catalogue });
      return value;
    },
    async windows(site, days) {
      const out = new Map<number, Promise<NormWindow>>();
      const missing: number[] = [];
      const t = now();
      for (const day of days) {
        const key = windowKey(site, day);
        const hit = windows.get(key);
        const loading = loadingWindows.get(key);
        if (hit && t - hit.loadedAt < ttlMs) out.set(day, Promise.resolve(hit.value));
        else if (loading) out.set(day, loading.promise);
        else missing.push(day);
      }
      if (missing.length > 0) {
        // One read covers every missing window: the rows of the 14 days before the first to the last day.
        const first = Math.min(...missing);
        const last = Math.max(...missing);
        const rows = loadRows(site, normWindow(first).from, normWindow(last).to);
        for (const day of missing) {
          const key = windowKey(site, day);
          // Each window keeps the whole read's rows; normsAsOf takes only those of its own days.
          const entry = {
            promise: rows.then((r): NormWindow => ({ rows: r, norms: normsAsOf(r, day) })),
            stale: false,
          };
          loadingWindows.set(key, entry);
          entry.promise
            .then((value) => {
              if (entry.stale) return;
              if (windows.size >= MAX_WINDOWS) sweep();
              windows.set(key, { value, loadedAt: t });
            })
            .catch(() => undefined)
            .finally(() => {
              if (loadingWindows.get(key) === entry) loadingWindows.delete(key);
            });
          out.set(day, entry.promise);
        }
      }
      const resolved = new Map<number, NormWindow>();
      for (const [day, promise] of out) resolved.set(day, await promise);
      return resolved;
    },
    stored(site, day) {
      // The windows holding `day` are those of day+1 … day+14.
      for (let d = day + DAY_MS; d <= day + NORM_DAYS * DAY_MS; d += DAY_MS) {
        const key = windowKey(site, d);
        windows.delete(key);
        const loading = loadingWindows.get(key);
        if (loading) {
          // Its read may predate the write: keep its answer for the batch that asked, not for later ones.
          loading.stale = true;
          loadingWindows.delete(key);
        }
      }
    },
    invalidate(site) {
      if (site === undefined) {
        classifiers.clear();
        windows.clear();
        for (const loading of loadingWindows.values()) loading.stale = true;
        loadingWindows.clear();
        return;
      }
      classifiers.delete(site);
      const prefix = `${site}\u0000`;
      for (const key of windows.keys()) if (key.startsWith(prefix)) windows.delete(key);
      for (const [key, loading] of loadingWindows) {
        if (!key.startsWith(prefix)) continue;
        loading.stale = true;
        loadingWindows.delete(key);
      }
    },
  };
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
