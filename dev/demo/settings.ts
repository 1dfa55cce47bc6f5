/**
 * The loop settings of the demo and of the end-to-end crawl test, stated rather than hidden: the
 * product's defaults judge a minute-by-minute 15-minute window every minute, with steps every minute —
 * right for production, too slow to watch. These are the same rules at a faster pace: what changes is
 * how soon the loop looks and steps, not what it concludes (the seed score is the same function).
 */
import type { SiteHealthInput } from '../../core/control/config';

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
 * A demo loop's input: the demo settings for every site alike. (A route-problem site needs nothing of its
 * own: while a failing route is being confirmed the loop holds the band, so the site is
 * not throttled before the route alert, at the demo's pace as in production.)
 */
export function demoLoopInput(site: string, options: { nominalConcurrency: number }): SiteHealthInput {
  const s = structuredClone(DEMO_LOOP_SETTINGS);
  return {
    site,
    ...s,
    policy: { ...s.policy, concurrency: { nominal: options.nominalConcurrency } },
  };
}

/** One line saying what the demo's pace is, for the terminal. */
export function describeDemoSettings(nominalConcurrency: number): string {
  const s = DEMO_LOOP_SETTINGS;
  return [
    `tick ${s.tickIntervalMs / 1000} s`,
    `window ${s.window.currentWindowMs / 60_000} min (refusals also over the last ` +
      `${s.window.recentWindowMs / 60_000} min)`,
    `smoothing half-life ${s.scoring.smoothing.halfLifeMs / 1000} s`,
    `a route confirmed after ${s.scoring.routes.confirmAfterMs / 1000} s`,
    `a step every ${s.policy.steps.degradeEveryMs / 1000} s down, ${s.policy.steps.restoreEveryMs / 1000} s up`,
    `nominal concurrency ${nominalConcurrency}`,
    '(production: 60 s ticks, 15-minute windows, steps per minute)',
  ].join(', ');
}
