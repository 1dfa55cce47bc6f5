/**
 * The per-site gauges of `/metrics`, filled at scrape time from one (cached) snapshot
 * (server/api/site-snapshot.ts). Every gauge is reset before it is filled, so a site that is gone disappears.
 * The band is a state set — one series per band, 1 for the site's band and 0 for the others (as
 * kube-state-metrics does for phases): `th_site_band{band="resisting"} == 1` selects, `sum by (band)`
 * counts, and a graph shows bands over time without a numeric code to decode.
 */
import { Gauge, type Registry } from 'prom-client';
import { HEALTH_BANDS } from '../../core/common/names';
import type { SiteSnapshot } from './site-snapshot';

/** The names the per-site collector exports (deploy/ files are checked against these and the registry's). */
export const SITE_GAUGES = {
  score: 'th_site_score',
  smoothedScore: 'th_site_smoothed_score',
  band: 'th_site_band',
  parserHealth: 'th_site_parser_health',
  awaitingHuman: 'th_site_awaiting_human',
  loopRunning: 'th_site_loop_running',
  lastAssessmentAge: 'th_site_last_assessment_age_seconds',
  tickInterval: 'th_site_tick_interval_seconds',
  sourceUp: 'th_site_metrics_source_up',
} as const;

export function registerSiteGauges(registry: Registry, read: () => Promise<SiteSnapshot>): void {
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (g: Gauge<L>, s: SiteSnapshot) => void,
  ): void => {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const snapshot = await read();
        this.reset();
        fill(this, snapshot);
      },
    });
  };
  const stored = (s: SiteSnapshot) => [...(s.stored ?? new Map<string, never>()).entries()];
  const loops = (s: SiteSnapshot) => [...(s.loops ?? new Map<string, never>()).entries()];

  gauge(
    SITE_GAUGES.score,
    'The latest assessment health score (0-100) of the site; absent while it has none (learning).',
    ['site'],
    (g, s) => {
      for (const [site, f] of stored(s)) if (f.score !== null) g.set({ site }, f.score);
    },
  );
  gauge(
    SITE_GAUGES.smoothedScore,
    'The smoothed health score (0-100) the band is judged on, of sites whose loop is running (HealthScore).',
    ['site'],
    (g, s) => {
      for (const [site, f] of loops(s)) if (f.smoothedScore !== null) g.set({ site }, f.smoothedScore);
    },
  );
  gauge(
    SITE_GAUGES.band,
    "The site's band as a state set: 1 for its band, 0 for the others (site_controls, else the running loop's " +
      'HealthBand).',
    ['site', 'band'],
    (g, s) => {
      const bands = new Map<string, string>();
      for (const [site, f] of loops(s)) if (f.band !== null) bands.set(site, f.band);
      // What the crawler obeys wins: it also says `stopped` once the loop has ended.
      for (const [site, f] of stored(s)) if (f.band !== null) bands.set(site, f.band);
      for (const [site, current] of bands)
        for (const band of HEALTH_BANDS) g.set({ site, band }, band === current ? 1 : 0);
    },
  );
  gauge(SITE_GAUGES.parserHealth, "The latest assessment's parser health (0-100) of the site.", ['site'], (g, s) => {
    for (const [site, f] of stored(s)) if (f.parserHealth !== null) g.set({ site }, f.parserHealth);
  });
  gauge(
    SITE_GAUGES.awaitingHuman,
    "1 while the site's running loop waits for a person (paused by the loop or by hand), else 0.",
    ['site'],
    (g, s) => {
      for (const [site, f] of loops(s)) g.set({ site }, f.awaitingHuman ? 1 : 0);
    },
  );
  gauge(
    SITE_GAUGES.loopRunning,
    '1 for every site known to PostgreSQL or Temporal whose loop is running, 0 for the others (absent when ' +
      'Temporal cannot be read).',
    ['site'],
    (g, s) => {
      if (s.loops === null) return;
      for (const [site] of stored(s)) g.set({ site }, 0);
      for (const [site] of loops(s)) g.set({ site }, 1);
    },
  );
  gauge(
    SITE_GAUGES.lastAssessmentAge,
    "Seconds since the site's latest assessment (its scheduled tick time).",
    ['site'],
    (g, s) => {
      for (const [site, f] of stored(s))
        if (f.lastAssessmentAgeSeconds !== null) g.set({ site }, f.lastAssessmentAgeSeconds);
    },
  );
  gauge(
    SITE_GAUGES.tickInterval,
    "The site's tick interval in seconds, as the gap between its loop's last two assessments.",
    ['site'],
    (g, s) => {
      for (const [site, f] of stored(s)) if (f.tickIntervalSeconds !== null) g.set({ site }, f.tickIntervalSeconds);
    },
  );
  gauge(
    SITE_GAUGES.sourceUp,
    '1 when the per-site gauges could read this source at the last scrape (postgres, temporal), else 0.',
    ['source'],
    (g, s) => {
      g.set({ source: 'postgres' }, s.stored === null ? 0 : 1);
      g.set({ source: 'temporal' }, s.loops === null ? 0 : 1);
    },
  );
}
