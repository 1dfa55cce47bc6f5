/**
 * Simple alert rules, scored beside the loop on the same traffic, so that the scorecard shows what the
 * loop buys over what an on-call team would set up in an afternoon. Pure: they read per-minute counts
 * (the store's all-routes minute rollups, tools/backtest/minute-series.ts) and say when they fire.
 *
 * How every rule is evaluated (the same for all three, and the same view of time as the loop's ticks):
 * - at every whole minute t (the instant minute [t − 1 min, t) has fully passed), over trailing windows
 *   [t − w, t) of whole minutes — no partial minute, no look-ahead, like the loop's windows;
 * - a minute without traffic counts as zero requests (the series is made dense);
 * - a window needs at least MIN_RULE_REQUESTS requests to judge: with fewer, the rule is not firing
 *   (a handful of requests on a quiet site makes any rate meaningless — and the loop has the same
 *   kind of floor);
 * - the rule's firings are episodes: the first minute the condition holds (`firedAt`) until the first
 *   minute it no longer does (`clearedAt`, null when it still held at the end of the range).
 *
 * "Success" is what the crawler wanted: an `ok` response, i.e. requests − hard blocks − challenges −
 * soft blocks − errors (network errors and 5xx count against success, as they would in any SLO).
 */

export interface MinuteCounts {
  /** Start of the minute, epoch ms (a multiple of 60,000). */
  minute: number;
  requests: number;
  hardBlocks: number;
  challenges: number;
  softBlocks: number;
  /** Network errors and server errors (the store's `errors` column). */
  errors: number;
}

export const MINUTE_MS = 60_000;

/** Requests a window needs before a rule judges it (5 minutes of a quiet site at 4 requests a minute). */
export const MIN_RULE_REQUESTS = 20;

/** Totals of a window of minutes. */
export interface WindowCounts {
  requests: number;
  refused: number;
  challenges: number;
  /** requests − refused − errors. */
  successes: number;
}

/** The windows a rule may ask for at evaluation time t: [t − ms, t). */
export type WindowReader = (ms: number) => WindowCounts;

export interface ReferenceRule {
  /** Short key used in the scorecard's columns and JSON. */
  name: string;
  /** One line for the scorecard's legend. */
  description: string;
  /** Longest window the rule reads: the series must start this long before the first evaluation. */
  lookbackMs: number;
  firing(read: WindowReader): boolean;
}

const enough = (w: WindowCounts): boolean => w.requests >= MIN_RULE_REQUESTS;

/**
 * (a) The global threshold: challenges are more than 5 % of the last 5 minutes' requests. One number for
 * every site — which is exactly its weakness: a site that always challenges 8 % of requests fires all
 * day, and hard blocks or soft blocks never fire it.
 */
export const CHALLENGE_THRESHOLD_RULE: ReferenceRule = {
  name: 'challenge>5%',
  description: 'challenges > 5 % of requests over the last 5 minutes (≥ 20 requests)',
  lookbackMs: 5 * MINUTE_MS,
  firing(read) {
    const w = read(5 * MINUTE_MS);
    return enough(w) && w.challenges / w.requests > 0.05;
  },
};

/** (b) Success rate below 40 % over the last 5 minutes. */
export const LOW_SUCCESS_RULE: ReferenceRule = {
  name: 'success<40%',
  description: 'success rate < 40 % over the last 5 minutes (≥ 20 requests)',
  lookbackMs: 5 * MINUTE_MS,
  firing(read) {
    const w = read(5 * MINUTE_MS);
    return enough(w) && w.successes / w.requests < 0.4;
  },
};

/**
 * (c) Multi-window, multi-burn-rate alert in the style of the Google SRE workbook ("Alerting on SLOs",
 * the recommended page conditions), on an assumed SLO of 95 % successful requests (error budget 5 %):
 *   burn rate over a window = (1 − success rate in it) / 0.05;
 *   fire when (burn(1 h) > 14.4 and burn(5 min) > 14.4)   — failure rate above 72 % in both, or
 *             (burn(6 h) > 6    and burn(30 min) > 6)     — failure rate above 30 % in both.
 * The long window makes it sure, the short one makes it stop soon after the problem does. Each window
 * needs ≥ 20 requests. 95 % because a crawler's normal success rate is far below a service's 99.9 %:
 * with 99.9 % every site with a few percent of challenges would burn its budget all the time.
 */
export const SLO_SUCCESS = 0.95;
const BUDGET = 1 - SLO_SUCCESS;
export const BURN_RATE_PAIRS = [
  { longMs: 60 * MINUTE_MS, shortMs: 5 * MINUTE_MS, factor: 14.4 },
  { longMs: 6 * 60 * MINUTE_MS, shortMs: 30 * MINUTE_MS, factor: 6 },
] as const;

function burnRate(w: WindowCounts): number {
  return (1 - w.successes / w.requests) / BUDGET;
}

export const BURN_RATE_RULE: ReferenceRule = {
  name: 'burn-rate',
  description: 'SLO 95 % success: burn > 14.4× over 1 h and 5 min, or > 6× over 6 h and 30 min (≥ 20 requests each)',
  lookbackMs: 6 * 60 * MINUTE_MS,
  firing(read) {
    return BURN_RATE_PAIRS.some(({ longMs, shortMs, factor }) => {
      const long = read(longMs);
      const short = read(shortMs);
      return enough(long) && enough(short) && burnRate(long) > factor && burnRate(short) > factor;
    });
  },
};

export const REFERENCE_RULES: readonly ReferenceRule[] = [CHALLENGE_THRESHOLD_RULE, LOW_SUCCESS_RULE, BURN_RATE_RULE];

/** The longest window any rule reads: how far before the range the minute series must start. */
export const RULES_LOOKBACK_MS = Math.max(...REFERENCE_RULES.map((r) => r.lookbackMs));

export interface RuleEpisode {
  /** The evaluation instant (a whole minute) at which the condition first held, epoch ms. */
  firedAt: number;
  /** The first evaluation instant at which it no longer held; null if it still held at the range's end. */
  clearedAt: number | null;
}

export interface RuleFirings {
  rule: string;
  episodes: RuleEpisode[];
}

/**
 * Cumulative sums over a dense minute series, so any trailing window is two subtractions. Minutes
 * outside the given counts are zero.
 */
class MinuteSums {
  private readonly start: number;
  private readonly cum: Array<[requests: number, refused: number, challenges: number, errors: number]>;

  constructor(series: readonly MinuteCounts[], start: number, end: number) {
    this.start = start;
    const n = Math.max(0, Math.ceil((end - start) / MINUTE_MS));
    const dense = Array.from({ length: n }, () => [0, 0, 0, 0] as [number, number, number, number]);
    for (const m of series) {
      const i = Math.floor((m.minute - start) / MINUTE_MS);
      if (i < 0 || i >= n) continue;
      const d = dense[i]!;
      d[0] += m.requests;
      d[1] += m.hardBlocks + m.challenges + m.softBlocks;
      d[2] += m.challenges;
      d[3] += m.errors;
    }
    this.cum = [[0, 0, 0, 0]];
    for (const d of dense) {
      const last = this.cum[this.cum.length - 1]!;
      this.cum.push([last[0] + d[0], last[1] + d[1], last[2] + d[2], last[3] + d[3]]);
    }
  }

  /** Totals of [t − ms, t), clipped to the series' range. */
  window(t: number, ms: number): WindowCounts {
    const clip = (x: number) => Math.min(this.cum.length - 1, Math.max(0, Math.floor((x - this.start) / MINUTE_MS)));
    const hi = this.cum[clip(t)]!;
    const lo = this.cum[clip(t - ms)]!;
    const requests = hi[0] - lo[0];
    const refused = hi[1] - lo[1];
    const errors = hi[3] - lo[3];
    return { requests, refused, challenges: hi[2] - lo[2], successes: requests - refused - errors };
  }
}

const ceilMinute = (t: number) => Math.ceil(t / MINUTE_MS) * MINUTE_MS;

/**
 * Evaluates each rule at every whole minute t with from ≤ t < to — the instants of the loop's ticks
 * at 60 s in a replay of [from, to) (a tick at t judges the minutes before t, and so does a rule).
 * `series` should cover [from − RULES_LOOKBACK_MS, to); minutes missing from it count as no traffic.
 */
export function evaluateReferenceRules(
  series: readonly MinuteCounts[],
  range: { from: number; to: number },
  rules: readonly ReferenceRule[] = REFERENCE_RULES,
): RuleFirings[] {
  const lookback = Math.max(0, ...rules.map((r) => r.lookbackMs));
  const first = ceilMinute(range.from);
  const last = ceilMinute(range.to) - MINUTE_MS;
  const sums = new MinuteSums(series, first - ceilMinute(lookback), last);
  return rules.map((rule) => {
    const episodes: RuleEpisode[] = [];
    let open: RuleEpisode | null = null;
    for (let t = first; t <= last; t += MINUTE_MS) {
      const on = rule.firing((ms) => sums.window(t, ms));
      if (on && open === null) {
        open = { firedAt: t, clearedAt: null };
        episodes.push(open);
      } else if (!on && open !== null) {
        open.clearedAt = t;
        open = null;
      }
    }
    return { rule: rule.name, episodes };
  });
}
