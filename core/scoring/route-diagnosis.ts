/**
 * Route diagnosis: is a rise in failures the site's doing, or a route's? A dead proxy pool fails against
 * every site; a site that turns against us fails on every route. So failures are split by route — each
 * country, pool and session pattern (and each individual route) is compared with the rest of the traffic
 * of the same window — and only a route that fails significantly *and* materially more often than the
 * rest is blamed. Its traffic is then left out of the site's score and reported as a route alert: a
 * dead pool must not pause a site. A route's failures are its refusals *and* its errors (network errors,
 * error answers; `routes.countErrors`): a proxy that refuses connections produces no refusal at all,
 * only errors, and those never reach the site's score.
 *
 * The test is a one-sided Fisher exact test (see fisher-exact.ts for why exact), Bonferroni-corrected
 * over the groups tested, with a minimum volume per group and a minimum gap in rate. Groups are removed
 * greedily (most significant first) and the rest re-tested, so a dead pool that happens to serve one
 * country does not also get that country blamed. docs/scoring.md has the full rule.
 *
 * Cost. One site's routes must not starve every other site's tick, so a round is linear in the routes:
 * each group's counts (and its baseline's) are kept up to date as routes are removed (a route is in at
 * most four groups), "the rest" is the remaining total minus the group, and groups with the same routes
 * are recognised by a hash of their route set (confirmed by comparing the sets). There are at most
 * MAX_SUSPECTS + 1 rounds: more independent suspects than that is the site's doing (site-wide). The
 * result is the same as re-summing every group and its rest from scratch each round, as the first
 * version did (test/kit/reference/route-diagnosis-v1.ts; the property test compares the two).
 */
import { DEFAULT_SCORING_CONFIG, type RouteConfig } from './config';
import { fisherExactGreater } from './fisher-exact';
import { CHALLENGES, ERRORS, HARD, REQUESTS, RouteGroups, SOFT, STRIDE } from './route-groups';
import type { HostilityWindow, RefusalCounts, RouteCounts, RouteLabels, RouteWindow } from './window';
import { type Interval, wilsonInterval } from './wilson';
import { plural } from '../common/plural';

export type RouteDimension = 'pool' | 'country' | 'sessionPattern' | 'route';
export type RouteVerdict = 'site-wide' | 'route-specific' | 'insufficient-data';

/**
 * More route groups than this failing independently (each still significant after the ones before it
 * were removed) is not a route problem but the site's: the verdict is site-wide. Bounds the rounds, and
 * with them the cost of a diagnosis, whatever the number of routes.
 */
export const MAX_SUSPECTS = 20;
/** A finding lists at most this many of its routes (`routeCount` has them all): diagnoses stay small. */
export const MAX_LISTED_ROUTES = 20;

export interface RouteGroupStats {
  requests: number;
  /** Hard blocks + challenges + soft blocks + errors (network errors, error answers), at most `requests`. */
  failures: number;
  rate: number;
  interval: Interval;
}

export interface RouteFinding {
  dimension: RouteDimension;
  /** The label value, or for dimension `route` the full label set, e.g. `country=US/pool=p1`. */
  value: string;
  /** The group's routes (those not already blamed by an earlier finding), the first MAX_LISTED_ROUTES. */
  routes: RouteLabels[];
  /** How many routes the group had. */
  routeCount: number;
  current: RouteGroupStats;
  /** The other routes still under consideration when this group was tested. */
  rest: RouteGroupStats;
  /** The group's own baseline, when it has enough volume to be compared with. */
  baseline: RouteGroupStats | null;
  /** current.rate - rest.rate. */
  gap: number;
  pValue: number;
  /** Bonferroni threshold the p-value was compared with: alpha / groups tested in that round. */
  threshold: number;
}

export interface RouteDiagnosis {
  verdict: RouteVerdict;
  /** One sentence for the operator. */
  summary: string;
  /** Groups that fail significantly more often than the rest, in the order found (at most MAX_SUSPECTS). */
  suspects: RouteFinding[];
  /** Traffic left out of the site's score (all zero unless the verdict is `route-specific`). */
  excluded: RefusalCounts;
  /** Share of the routes' requests carried by the suspects. */
  suspectShare: number;
  /** Groups with enough volume to be tested in the first round. */
  testedGroups: number;
}

interface MergedRoute {
  key: string;
  /** The last part merged: its labels are the route's (see mergeRoutes). */
  last: RouteWindow;
  counts: RouteCounts;
  p95LatencyMs: number | undefined;
  /** The same route's baseline counts, when it has any (only routes of the current window matter). */
  baseline?: RouteCounts;
}

const LABEL_DIMENSIONS = ['pool', 'country', 'sessionPattern'] as const;
const ZERO: RefusalCounts = { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 };

/** `country=US/pool=p1/sessionPattern=sticky`, labels in a fixed order; `(unlabelled)` when none. */
export function routeKey(labels: RouteLabels): string {
  let key = labels.country === undefined ? '' : `country=${labels.country}`;
  if (labels.pool !== undefined) key += `${key === '' ? '' : '/'}pool=${labels.pool}`;
  if (labels.sessionPattern !== undefined) key += `${key === '' ? '' : '/'}sessionPattern=${labels.sessionPattern}`;
  return key === '' ? '(unlabelled)' : key;
}

/** Just the labels of a route (what a finding lists). */
export function labelsOf(r: RouteLabels): RouteLabels {
  const labels: RouteLabels = {};
  if (r.country !== undefined) labels.country = r.country;
  if (r.pool !== undefined) labels.pool = r.pool;
  if (r.sessionPattern !== undefined) labels.sessionPattern = r.sessionPattern;
  return labels;
}

/**
 * Routes with identical labels (e.g. reported by two crawler processes) are one route; sorted by key.
 * Keys can collide when a label holds "/" or "=": such routes merge too, under the last one's labels
 * (as in the first version).
 */
function mergeRoutes(
  routes: readonly RouteWindow[],
  baseline: readonly RouteWindow[] = [],
  countErrors = true,
): MergedRoute[] {
  const merged = mergedByKey(routes, countErrors);
  for (let i = 0; i < baseline.length; i++) {
    const r = baseline[i]!;
    const m = merged.get(routeKey(r));
    if (m === undefined) continue;
    const b = (m.baseline ??= { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0, errors: 0 });
    b.requests += r.requests;
    b.hardBlocks += r.hardBlocks;
    b.challenges += r.challenges;
    b.softBlocks += r.softBlocks;
    b.errors = (b.errors ?? 0) + (countErrors ? (r.errors ?? 0) : 0);
  }
  // The default sort order is code-unit order (what the first version's comparator gave), and faster.
  return [...merged.keys()].sort().map((k) => merged.get(k)!);
}

/** The merged routes by key, unsorted; errors left at 0 unless `countErrors`. */
function mergedByKey(routes: readonly RouteWindow[], countErrors: boolean): Map<string, MergedRoute> {
  const merged = new Map<string, MergedRoute>();
  for (const r of routes) {
    const key = routeKey(r);
    const previous = merged.get(key);
    if (previous === undefined) {
      // Counts copied into objects of one shape: inputs come in many shapes, and reading them again and
      // again would be slow.
      merged.set(key, {
        key,
        last: r,
        counts: {
          requests: r.requests,
          hardBlocks: r.hardBlocks,
          challenges: r.challenges,
          softBlocks: r.softBlocks,
          errors: countErrors ? (r.errors ?? 0) : 0,
        },
        p95LatencyMs: r.p95LatencyMs,
      });
      continue;
    }
    const c = previous.counts;
    previous.last = r;
    previous.counts = {
      requests: c.requests + r.requests,
      hardBlocks: c.hardBlocks + r.hardBlocks,
      challenges: c.challenges + r.challenges,
      softBlocks: c.softBlocks + r.softBlocks,
      errors: (c.errors ?? 0) + (countErrors ? (r.errors ?? 0) : 0),
    };
    // p95 of merged parts is unknown; their maximum bounds it from above. Unknown if any part lacks it.
    previous.p95LatencyMs =
      previous.p95LatencyMs === undefined || r.p95LatencyMs === undefined
        ? undefined
        : Math.max(previous.p95LatencyMs, r.p95LatencyMs);
  }
  return merged;
}

/**
 * Whether every sum the diagnosis can form is an exact integer: each count's total over all routes at
 * most 2^53 - 1. Beyond that, sums round and "the rest" is no longer the rest (hostile or corrupt
 * counts; real traffic is nowhere near).
 */
function exactlySummable(routes: readonly MergedRoute[], of: (r: MergedRoute) => RouteCounts | undefined): boolean {
  let requests = 0;
  let hard = 0;
  let challenges = 0;
  let soft = 0;
  let errors = 0;
  for (let i = 0; i < routes.length; i++) {
    const c = of(routes[i]!);
    if (c === undefined) continue;
    requests += c.requests;
    hard += c.hardBlocks;
    challenges += c.challenges;
    soft += c.softBlocks;
    errors += c.errors ?? 0;
  }
  return Math.max(requests, hard, challenges, soft, errors) <= Number.MAX_SAFE_INTEGER;
}

/**
 * A route's failures: hard blocks + challenges + soft blocks + errors, at most the requests (a
 * malformed aggregate may count more). Errors count here though not in the site's score: a dead proxy
 * answers nothing at all, and that is the route's failure.
 */
function failuresOf(requests: number, hard: number, challenges: number, soft: number, errors: number): number {
  return Math.min(requests, hard + challenges + soft + errors);
}

const rateOf = (failures: number, requests: number): number => failures / Math.max(1, requests);

function stats(c: RouteCounts): RouteGroupStats {
  const failures = failuresOf(c.requests, c.hardBlocks, c.challenges, c.softBlocks, c.errors ?? 0);
  return {
    requests: c.requests,
    failures,
    rate: rateOf(failures, c.requests),
    interval: wilsonInterval(failures, c.requests),
  };
}

const countsAt = (a: Float64Array, k: number): RouteCounts => ({
  requests: a[STRIDE * k + REQUESTS]!,
  hardBlocks: a[STRIDE * k + HARD]!,
  challenges: a[STRIDE * k + CHALLENGES]!,
  softBlocks: a[STRIDE * k + SOFT]!,
  errors: a[STRIDE * k + ERRORS]!,
});

/** The suspect of one round: the most significant group (then the larger gap, then candidate order). */
function bestGroup(
  groups: RouteGroups,
  config: RouteConfig,
  tested: Int32Array,
  testedCount: number,
  threshold: number,
): { group: number; pValue: number; gap: number } | null {
  const { counts, base, remaining } = groups;
  let best: { group: number; pValue: number; gap: number } | null = null;
  for (let t = 0; t < testedCount; t++) {
    const k = tested[t]!;
    const o = STRIDE * k;
    const requests = counts[o + REQUESTS]!;
    const failures = failuresOf(
      requests,
      counts[o + HARD]!,
      counts[o + CHALLENGES]!,
      counts[o + SOFT]!,
      counts[o + ERRORS]!,
    );
    const restRequests = remaining[REQUESTS]! - requests;
    const restFailures = failuresOf(
      restRequests,
      remaining[HARD]! - counts[o + HARD]!,
      remaining[CHALLENGES]! - counts[o + CHALLENGES]!,
      remaining[SOFT]! - counts[o + SOFT]!,
      remaining[ERRORS]! - counts[o + ERRORS]!,
    );
    const rate = rateOf(failures, requests);
    const gap = rate - rateOf(restFailures, restRequests);
    if (gap < config.minRateGap) continue;
    const baseRequests = base[o + REQUESTS]!;
    // A route that always failed this much is its normal, already in the site's baseline: not news.
    if (
      baseRequests >= config.minRouteRequests &&
      rate -
        rateOf(
          failuresOf(baseRequests, base[o + HARD]!, base[o + CHALLENGES]!, base[o + SOFT]!, base[o + ERRORS]!),
          baseRequests,
        ) <
        config.minRateGap
    )
      continue;
    const pValue = fisherExactGreater(failures, requests, restFailures, restRequests);
    if (pValue > threshold) continue;
    if (best === null || pValue < best.pValue || (pValue === best.pValue && gap > best.gap))
      best = { group: k, pValue, gap };
  }
  return best;
}

/**
 * Diagnoses per-route counts of the current window against each other (and against each route's own
 * baseline where it has one).
 */
export function diagnoseRoutes(
  current: readonly RouteWindow[],
  baseline: readonly RouteWindow[],
  config: RouteConfig = DEFAULT_SCORING_CONFIG.routes,
): RouteDiagnosis {
  const routes = mergeRoutes(current, baseline, config.countErrors);
  if (!exactlySummable(routes, (r) => r.counts) || !exactlySummable(routes, (r) => r.baseline)) {
    return {
      verdict: 'insufficient-data',
      summary: `route counts too large to compare exactly (a total above ${Number.MAX_SAFE_INTEGER})`,
      suspects: [],
      excluded: ZERO,
      suspectShare: 0,
      testedGroups: 0,
    };
  }
  const groups = new RouteGroups(
    routes.map((r) => ({ key: r.key, labels: r.last, counts: r.counts, baseline: r.baseline })),
  );
  const suspects: RouteFinding[] = [];
  const suspectRoutes: number[] = [];
  let testedGroups = -1;
  /** A further suspect was significant after MAX_SUSPECTS were found. */
  let tooMany = false;
  const tested = new Int32Array(groups.size);

  while (groups.remainingRoutes > 0) {
    // Groups with enough volume, and a rest with enough volume, in candidate order.
    let testedCount = 0;
    for (let k = 0; k < groups.size; k++) {
      if (!groups.isListed(k)) continue;
      const requests = groups.counts[STRIDE * k + REQUESTS]!;
      if (requests >= config.minRouteRequests && groups.remaining[REQUESTS]! - requests >= config.minRouteRequests)
        tested[testedCount++] = k;
    }
    if (testedGroups < 0) testedGroups = testedCount;
    if (testedCount === 0) break;
    const threshold = config.alpha / testedCount;
    const best = bestGroup(groups, config, tested, testedCount, threshold);
    if (best === null) break;
    if (suspects.length === MAX_SUSPECTS) {
      tooMany = true;
      break;
    }
    const k = best.group;
    const members = groups.liveMembers(k);
    const c = countsAt(groups.counts, k);
    const r = groups.remaining;
    const b = countsAt(groups.base, k);
    suspects.push({
      dimension: groups.dimension[k]!,
      value: groups.value[k]!,
      routes: members.slice(0, MAX_LISTED_ROUTES).map((i) => labelsOf(routes[i]!.last)),
      routeCount: members.length,
      current: stats(c),
      rest: stats({
        requests: r[REQUESTS]! - c.requests,
        hardBlocks: r[HARD]! - c.hardBlocks,
        challenges: r[CHALLENGES]! - c.challenges,
        softBlocks: r[SOFT]! - c.softBlocks,
        errors: r[ERRORS]! - (c.errors ?? 0),
      }),
      baseline: b.requests >= config.minRouteRequests ? stats(b) : null,
      gap: best.gap,
      pValue: best.pValue,
      threshold,
    });
    suspectRoutes.push(...members);
    groups.remove(members);
  }

  let totalRequests = 0;
  for (const r of routes) totalRequests += r.counts.requests;
  const suspectCounts = { ...ZERO };
  // In key order, as the first version summed them (exact either way).
  for (const i of [...suspectRoutes].sort((x, y) => x - y)) {
    const c = routes[i]!.counts;
    suspectCounts.requests += c.requests;
    suspectCounts.hardBlocks += c.hardBlocks;
    suspectCounts.challenges += c.challenges;
    suspectCounts.softBlocks += c.softBlocks;
  }
  const suspectShare = totalRequests === 0 ? 0 : suspectCounts.requests / totalRequests;
  const describe = suspects
    .map(
      (s) =>
        `${s.dimension} ${s.value} (${(s.current.rate * 100).toFixed(0)}% failing vs ` +
        `${(s.rest.rate * 100).toFixed(0)}%)`,
    )
    .join(', ');

  if (suspects.length === 0) {
    if (testedGroups <= 0) {
      return {
        verdict: 'insufficient-data',
        summary:
          routes.length === 0
            ? 'no per-route counts in this window'
            : `no route group and rest with at least ${plural(config.minRouteRequests, 'request')} each to compare`,
        suspects,
        excluded: ZERO,
        suspectShare,
        testedGroups: Math.max(0, testedGroups),
      };
    }
    return {
      verdict: 'site-wide',
      summary: `no route stands out among ${plural(testedGroups, 'group')} tested`,
      suspects,
      excluded: ZERO,
      suspectShare,
      testedGroups,
    };
  }
  if (tooMany) {
    return {
      verdict: 'site-wide',
      summary:
        `more than ${MAX_SUSPECTS} route groups fail independently: treated as the site's doing (first ` +
        `${MAX_SUSPECTS}: ${describe})`,
      suspects,
      excluded: ZERO,
      suspectShare,
      testedGroups,
    };
  }
  if (suspectShare > config.maxBadShare) {
    return {
      verdict: 'site-wide',
      summary:
        `failing routes carry ${(suspectShare * 100).toFixed(0)}% of the traffic, more than ` +
        `${(config.maxBadShare * 100).toFixed(0)}%: treated as the site's doing (${describe})`,
      suspects,
      excluded: ZERO,
      suspectShare,
      testedGroups,
    };
  }
  return {
    verdict: 'route-specific',
    summary: `route problem: ${describe}`,
    suspects,
    excluded: suspectCounts,
    suspectShare,
    testedGroups,
  };
}

/**
 * The window the health score should judge: the site's window minus the suspect routes' traffic. The
 * p95 of what remains is not known exactly; when the routes account for all the traffic and each
 * remaining route reports its p95, the largest of those bounds it from above (at least 95% of every
 * remaining route's requests are at or below it). Otherwise the site's p95 is kept.
 */
export function healthyRoutesWindow(
  window: HostilityWindow & { routes: readonly RouteWindow[] },
  diagnosis: RouteDiagnosis,
): HostilityWindow {
  if (diagnosis.verdict !== 'route-specific') {
    return {
      requests: window.requests,
      hardBlocks: window.hardBlocks,
      challenges: window.challenges,
      softBlocks: window.softBlocks,
      p95LatencyMs: window.p95LatencyMs,
    };
  }
  const ex = diagnosis.excluded;
  // A suspect's routes are the routes carrying its label (or, for `route`, its key) that no earlier
  // suspect took, so together the suspects cover exactly the routes matching any of them — which needs
  // no list of every route (findings list only a few).
  const suspectValues = {
    pool: new Set<string>(),
    country: new Set<string>(),
    sessionPattern: new Set<string>(),
    route: new Set<string>(),
  };
  for (const s of diagnosis.suspects) suspectValues[s.dimension].add(s.value);
  const isSuspect = (r: MergedRoute): boolean =>
    suspectValues.route.has(r.key) ||
    LABEL_DIMENSIONS.some((d) => r.last[d] !== undefined && suspectValues[d].has(r.last[d]));
  const routes = mergeRoutes(window.routes, [], false);
  let routeRequests = 0;
  let healthyCount = 0;
  let healthyP95: number | undefined = -Infinity;
  for (const r of routes) {
    routeRequests += r.counts.requests;
    if (isSuspect(r)) continue;
    healthyCount++;
    healthyP95 =
      healthyP95 === undefined || r.p95LatencyMs === undefined ? undefined : Math.max(healthyP95, r.p95LatencyMs);
  }
  let p95 = window.p95LatencyMs;
  if (routeRequests === window.requests && healthyCount > 0 && healthyP95 !== undefined) p95 = healthyP95;
  return {
    requests: Math.max(0, window.requests - ex.requests),
    hardBlocks: Math.max(0, window.hardBlocks - ex.hardBlocks),
    challenges: Math.max(0, window.challenges - ex.challenges),
    softBlocks: Math.max(0, window.softBlocks - ex.softBlocks),
    p95LatencyMs: p95,
  };
}
