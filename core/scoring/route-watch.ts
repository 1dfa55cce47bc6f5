/**
 * Route alerts that mean it: confirmation and hysteresis on top of one tick's route diagnosis.
 *
 * `diagnoseRoutes` tests one window. Run on every tick over a 15-minute window that mostly overlaps the
 * previous one, its family-wise 1 % false-alarm rate per tick still adds up to spurious alerts over a
 * day, and a cluster of failures stays "significant" for as long as it stays inside the window. So a
 * suspect is only *watched* at first. It is confirmed — alerted, and its traffic set aside from the
 * site's score — once
 *   - it has been the suspect on `confirmTicks` (3) consecutive ticks spanning `confirmAfterMs` (2 min),
 *   - and on each of those ticks it also fails, in the recent window (the last 5 whole minutes), at
 *     least `minConfirmGap` (30 points) more often than the rest of that window (with at least
 *     `minRecentRouteRequests` of its own), significantly so on its own (one-sided Fisher exact test,
 *     p ≤ `recentAlpha`, 10⁻⁵): fresh evidence of a large effect.
 * A confirmed route stays confirmed (and set aside) until it has not been a suspect for `clearTicks` (5)
 * consecutive ticks with data, so an alert neither flaps nor re-arms on every tick that looks site-wide.
 * Ticks without enough data to test (verdict `insufficient-data`) neither advance nor break anything.
 *
 * The watch is a small list carried from tick to tick in the loop state (at most MAX_WATCHED entries).
 */
import { z } from 'zod';
import { DEFAULT_SCORING_CONFIG, type RouteConfig } from './config';
import { fisherExactGreater } from './fisher-exact';
import {
  type RouteDiagnosis,
  type RouteDimension,
  type RouteFinding,
  type RouteGroupStats,
  MAX_LISTED_ROUTES,
  labelsOf,
  routeKey,
} from './route-diagnosis';
import type { RecentWindow, RefusalCounts, RouteCounts, RouteWindow } from './window';
import { wilsonInterval } from './wilson';
import { plural } from '../common/plural';

/** Entries kept at most: every suspect of a tick (MAX_SUSPECTS) and as many confirmed ones. */
export const MAX_WATCHED = 40;

const routeWatchEntrySchema = z.object({
  dimension: z.enum(['pool', 'country', 'sessionPattern', 'route']),
  value: z.string().max(1_000),
  /** Consecutive ticks on which it was a suspect with fresh evidence (unconfirmed entries). */
  streak: z.int().min(0),
  /** When that streak began (ISO), or null when the tick's time was not known. */
  since: z.string().max(40).nullable(),
  /** Consecutive ticks with data on which a confirmed entry was not a suspect. */
  quiet: z.int().min(0),
  confirmed: z.boolean(),
});
export type RouteWatchEntry = z.output<typeof routeWatchEntrySchema>;
const ROUTE_WATCH_SCHEMA = z.array(routeWatchEntrySchema).max(MAX_WATCHED);
export type RouteWatch = RouteWatchEntry[];

/** A suspect not confirmed yet, for the operator's view. */
export interface WatchedRoute {
  dimension: RouteDimension;
  value: string;
  /** Consecutive supported ticks so far, and the number needed. */
  ticks: number;
  confirmTicks: number;
}

export interface ConfirmedDiagnosis extends RouteDiagnosis {
  /** Suspects being watched, not blamed yet. */
  watching: WatchedRoute[];
  /** Identities (`pool:dc-3`) confirmed on this tick. */
  newlyConfirmed: string[];
}

export interface RouteWatchResult {
  diagnosis: ConfirmedDiagnosis;
  watch: RouteWatch;
}

const identity = (dimension: RouteDimension, value: string): string => `${dimension}:${value}`;

function matches(r: RouteWindow, dimension: RouteDimension, value: string): boolean {
  return dimension === 'route' ? routeKey(r) === value : r[dimension] === value;
}

function add(into: Required<RouteCounts>, c: RouteCounts, countErrors: boolean): void {
  into.requests += c.requests;
  into.hardBlocks += c.hardBlocks;
  into.challenges += c.challenges;
  into.softBlocks += c.softBlocks;
  if (countErrors) into.errors += c.errors ?? 0;
}

const zero = (): Required<RouteCounts> => ({ requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0, errors: 0 });
/** A route's failures, as route diagnosis counts them: refusals and errors. */
const failures = (c: RouteCounts): number =>
  Math.min(c.requests, c.hardBlocks + c.challenges + c.softBlocks + (c.errors ?? 0));
const rate = (c: RouteCounts): number => failures(c) / Math.max(1, c.requests);

function stats(c: RouteCounts): RouteGroupStats {
  return {
    requests: c.requests,
    failures: failures(c),
    rate: rate(c),
    interval: wilsonInterval(failures(c), c.requests),
  };
}

/** A group's counts and the rest's, over a list of routes (errors summed only when they count as failures). */
function split(
  routes: readonly RouteWindow[],
  isIn: (r: RouteWindow) => boolean,
  countErrors: boolean,
): { group: Required<RouteCounts>; rest: Required<RouteCounts>; members: RouteWindow[] } {
  const group = zero();
  const rest = zero();
  const members: RouteWindow[] = [];
  for (const r of routes) {
    if (isIn(r)) {
      add(group, r, countErrors);
      members.push(r);
    } else add(rest, r, countErrors);
  }
  return { group, rest, members };
}

/**
 * Fresh evidence: in the recent window the group fails at least `minConfirmGap` more often than the rest,
 * with p ≤ `recentAlpha`. Recent windows of consecutive ticks overlap too, so the effect size and the
 * significance guard against one small cluster being counted three times.
 */
function freshlyFailing(
  recent: RecentWindow | undefined,
  dimension: RouteDimension,
  value: string,
  config: RouteConfig,
): boolean {
  // Windows read before the recent window existed: the current window's test alone.
  if (recent === undefined) return true;
  const { group, rest } = split(recent.routes, (r) => matches(r, dimension, value), config.countErrors);
  if (group.requests < config.minRecentRouteRequests) return false;
  if (rate(group) - rate(rest) < config.minConfirmGap) return false;
  // One pre-named hypothesis per suspect (no correction for the groups): is this route worse than the rest?
  return fisherExactGreater(failures(group), group.requests, failures(rest), rest.requests) <= config.recentAlpha;
}

/** A confirmed group's finding on this tick's window (also when this tick's test did not single it out). */
function findingFor(
  entry: RouteWatchEntry,
  routes: readonly RouteWindow[],
  taken: (r: RouteWindow) => boolean,
  raw: RouteFinding | undefined,
  countErrors: boolean,
): RouteFinding {
  if (raw !== undefined) return raw;
  const { group, rest, members } = split(
    routes,
    (r) => !taken(r) && matches(r, entry.dimension, entry.value),
    countErrors,
  );
  return {
    dimension: entry.dimension,
    value: entry.value,
    routes: members.slice(0, MAX_LISTED_ROUTES).map(labelsOf),
    routeCount: members.length,
    current: stats(group),
    rest: stats(rest),
    baseline: null,
    gap: rate(group) - rate(rest),
    pValue: fisherExactGreater(failures(group), group.requests, failures(rest), rest.requests),
    // Held by hysteresis, not by this tick's test: no threshold was applied.
    threshold: 1,
  };
}

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

/**
 * Advances the watch with this tick's raw diagnosis and returns the diagnosis to act on: route-specific
 * only for confirmed routes (the rest are listed in `watching`). `at` is the tick's time (ms), or null.
 */
export function confirmRoutes(
  raw: RouteDiagnosis,
  routes: readonly RouteWindow[],
  recent: RecentWindow | undefined,
  previous: readonly RouteWatchEntry[],
  at: number | null,
  config: RouteConfig = DEFAULT_SCORING_CONFIG.routes,
): RouteWatchResult {
  const hasData = raw.verdict !== 'insufficient-data';
  // Suspects of this tick's test. A site-wide verdict reached because the suspects carry too much of the
  // traffic (or are too many) blames no route: none of them is a suspect.
  const suspects = new Map<string, RouteFinding>();
  if (raw.verdict === 'route-specific') for (const s of raw.suspects) suspects.set(identity(s.dimension, s.value), s);

  const next: RouteWatch = [];
  const newlyConfirmed: string[] = [];
  const seen = new Set<string>();
  for (const e of previous) {
    const id = identity(e.dimension, e.value);
    seen.add(id);
    const suspect = suspects.has(id);
    if (!hasData) {
      next.push(e);
      continue;
    }
    if (e.confirmed) {
      const quiet = suspect ? 0 : e.quiet + 1;
      if (quiet < config.clearTicks) next.push({ ...e, quiet });
      continue;
    }
    if (!suspect || !freshlyFailing(recent, e.dimension, e.value, config)) continue;
    next.push(advance(e, at, config, newlyConfirmed));
  }
  for (const [id, s] of suspects) {
    if (seen.has(id) || !freshlyFailing(recent, s.dimension, s.value, config)) continue;
    const fresh: RouteWatchEntry = {
      dimension: s.dimension,
      value: s.value,
      streak: 0,
      since: at === null ? null : new Date(at).toISOString(),
      quiet: 0,
      confirmed: false,
    };
    next.push(advance(fresh, at, config, newlyConfirmed));
  }
  // Bounded: confirmed entries first, then the longest streaks.
  next.sort((a, b) => Number(b.confirmed) - Number(a.confirmed) || b.streak - a.streak);
  const watch = next.slice(0, MAX_WATCHED);

  return { diagnosis: diagnosisOf(raw, routes, watch, suspects, newlyConfirmed, config), watch };
}

function advance(
  e: RouteWatchEntry,
  at: number | null,
  config: RouteConfig,
  newlyConfirmed: string[],
): RouteWatchEntry {
  const streak = e.streak + 1;
  const since = e.since ?? (at === null ? null : new Date(at).toISOString());
  const lasted = at === null || since === null ? Infinity : at - Date.parse(since);
  const confirmed = streak >= config.confirmTicks && lasted >= config.confirmAfterMs;
  if (confirmed) newlyConfirmed.push(identity(e.dimension, e.value));
  return { ...e, streak, since, quiet: 0, confirmed };
}

function diagnosisOf(
  raw: RouteDiagnosis,
  routes: readonly RouteWindow[],
  watch: RouteWatch,
  suspects: ReadonlyMap<string, RouteFinding>,
  newlyConfirmed: string[],
  config: RouteConfig,
): ConfirmedDiagnosis {
  const watching = watch
    .filter((e) => !e.confirmed)
    .map((e) => ({ dimension: e.dimension, value: e.value, ticks: e.streak, confirmTicks: config.confirmTicks }));
  const watchedText = (w: WatchedRoute): string =>
    `${w.dimension} ${w.value} (${w.ticks} of ${plural(w.confirmTicks, 'tick')})`;
  const watchingText = watching.length === 0 ? '' : `; watching ${watching.map(watchedText).join(', ')}`;
  const confirmed = watch.filter((e) => e.confirmed);
  if (confirmed.length === 0) {
    const verdict = raw.verdict === 'route-specific' ? 'site-wide' : raw.verdict;
    const summary =
      raw.verdict === 'route-specific' ? `no route confirmed yet${watchingText}` : `${raw.summary}${watchingText}`;
    return {
      ...raw,
      verdict,
      summary,
      suspects: [],
      excluded: { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 },
      suspectShare: raw.verdict === 'route-specific' ? 0 : raw.suspectShare,
      watching,
      newlyConfirmed,
    };
  }
  // The confirmed groups' findings, each over the routes no earlier one took (as diagnoseRoutes lists them).
  const findings: RouteFinding[] = [];
  const takenBy = (r: RouteWindow): boolean => findings.some((f) => matches(r, f.dimension, f.value));
  for (const e of confirmed)
    findings.push(findingFor(e, routes, takenBy, suspects.get(identity(e.dimension, e.value)), config.countErrors));
  const { group, rest } = split(routes, takenBy, false);
  // What the site's score leaves out: the routes' requests and refusals (errors are not in the score).
  const excluded: RefusalCounts = {
    requests: group.requests,
    hardBlocks: group.hardBlocks,
    challenges: group.challenges,
    softBlocks: group.softBlocks,
  };
  const total = excluded.requests + rest.requests;
  const share = total === 0 ? 0 : excluded.requests / total;
  const describe = findings
    .map((s) => `${s.dimension} ${s.value} (${pct(s.current.rate)} failing vs ${pct(s.rest.rate)})`)
    .join(', ');
  if (share > config.maxBadShare) {
    return {
      ...raw,
      verdict: 'site-wide',
      summary:
        `confirmed failing routes carry ${pct(share)} of the traffic, more than ${pct(config.maxBadShare)}: ` +
        `treated as the site's doing (${describe})`,
      suspects: findings,
      excluded: { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 },
      suspectShare: share,
      watching,
      newlyConfirmed,
    };
  }
  return {
    ...raw,
    verdict: 'route-specific',
    summary: `route problem: ${describe}${watchingText}`,
    suspects: findings,
    excluded,
    suspectShare: share,
    watching,
    newlyConfirmed,
  };
}

/**
 * `total` without the traffic of the routes in any of `groups` (what the refusal rules judge: a failing
 * route's refusals are the route's, not the site's).
 */
export function withoutGroups(
  total: RefusalCounts,
  routes: readonly RouteWindow[],
  groups: ReadonlyArray<{ dimension: RouteDimension; value: string }>,
): RefusalCounts {
  if (groups.length === 0)
    return {
      requests: total.requests,
      hardBlocks: total.hardBlocks,
      challenges: total.challenges,
      softBlocks: total.softBlocks,
    };
  const { group } = split(routes, (r) => groups.some((g) => matches(r, g.dimension, g.value)), false);
  return {
    requests: Math.max(0, total.requests - group.requests),
    hardBlocks: Math.max(0, total.hardBlocks - group.hardBlocks),
    challenges: Math.max(0, total.challenges - group.challenges),
    softBlocks: Math.max(0, total.softBlocks - group.softBlocks),
  };
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const routeWatchSchema = (): typeof ROUTE_WATCH_SCHEMA => ROUTE_WATCH_SCHEMA;
