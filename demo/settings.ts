/**
 * The loop settings of the demo and of the end-to-end crawl test, stated rather than hidden: the
 * product's defaults judge a minute-by-minute 15-minute window every minute, with steps every minute —
 * right for production, too slow to watch. These are the same rules at a faster pace: what changes is
 * how soon the loop looks and steps, not what it concludes (the seed score is the same function).
 */
import type { SiteHealthInput } from '../control/config';

export const DEMO_LOOP_SETTINGS = {
  /** A tick every 5 s (production: 60 s). */
  tickIntervalMs: 5_000,
  /** Judge the last 3 whole minutes, refusal rules also the last 1 (production: 15 and 5). */
  window: { currentWindowMs: 3 * 60_000, recentWindowMs: 60_000 },
  scoring: {
    /** Smoothing half-life 60 s (production: 10 min); a route confirmed after 12 s of evidence (production: 2 min). */
    smoothing: { halfLifeMs: 60_000 },
    routes: { confirmAfterMs: 12_000 },
  },
  policy: {
    /** One throttling step per 10 s, one restoring step per 30 s (production: one per minute each). */
    steps: { degradeEveryMs: 10_000, restoreEveryMs: 30_000 },
    parserAlertAfterMs: 30_000,
  },
} as const satisfies Omit<SiteHealthInput, 'site'>;

/**
 * A demo loop's input. `productionSmoothing`: the product's 10-minute smoothing half-life instead of the
 * demo's 60 s. Route evidence is judged per whole minute (three ticks, each with a new minute of evidence),
 * so at the demo's 5 s ticks a route takes about three minutes to confirm — long enough for a 60 s
 * half-life to throttle the site first; at the production half-life the route is confirmed and set aside
 * while the smoothed score has barely moved, as in production. The demo's route-problem site uses it.
 */
export function demoLoopInput(site: string, options: { nominalConcurrency: number; productionSmoothing?: boolean }): SiteHealthInput {
  const s = structuredClone(DEMO_LOOP_SETTINGS);
  return {
    site,
    ...s,
    scoring: { ...s.scoring, smoothing: { halfLifeMs: options.productionSmoothing === true ? 600_000 : s.scoring.smoothing.halfLifeMs } },
    policy: { ...s.policy, concurrency: { nominal: options.nominalConcurrency } },
  };
}

/** One line saying what the demo's pace is, for the terminal. */
export function describeDemoSettings(nominalConcurrency: number): string {
  const s = DEMO_LOOP_SETTINGS;
  return [
    `tick ${s.tickIntervalMs / 1000} s`,
    `window ${s.window.currentWindowMs / 60_000} min (refusals also over the last ${s.window.recentWindowMs / 60_000} min)`,
    `smoothing half-life ${s.scoring.smoothing.halfLifeMs / 1000} s (the route-problem site: 10 min, as in production)`,
    `a route confirmed after ${s.scoring.routes.confirmAfterMs / 1000} s`,
    `a step every ${s.policy.steps.degradeEveryMs / 1000} s down, ${s.policy.steps.restoreEveryMs / 1000} s up`,
    `nominal concurrency ${nominalConcurrency}`,
    '(production: 60 s ticks, 15-minute windows, steps per minute)',
  ].join(', ');
}
