/**
 * The route diagnosis as it was before the near-linear rewrite (core/scoring/route-diagnosis.ts at commit
 * 260a16c), kept verbatim as the reference oracle: the property test checks the new implementation
 * against it and `npm run bench:routes` times both in the same run. Not used by production code.
 * Its cost grows faster than quadratically in the number of routes (every group re-sums "the rest").
 */
import { DEFAULT_SCORING_CONFIG, type RouteConfig } from '../../../core/scoring/config';
import { fisherExactGreater } from '../../../core/scoring/fisher-exact';
import type { HostilityWindow, RefusalCounts, RouteLabels, RouteWindow } from '../../../core/scoring/window';
import { type Interval, wilsonInterval } from '../../../core/scoring/wilson';

export type RouteDimension = 'pool' | 'country' | 'sessionPattern' | 'route';
export type RouteVerdict = 'site-wide' | 'route-specific' | 'insufficient-data';

export interface RouteGroupStats {
  requests: number;
  /** Hard blocks + challenges + soft blocks, at most `requests`. */
  failures: number;
  rate: number;
  interval: Interval;
}

export interface RouteFinding {
  dimension: RouteDimension;
  /** The label value, or for dimension `route` the full label set, e.g. `country=US/pool=p1`. */
  value: string;
  routes: RouteLabels[];
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
  /** Groups that fail significantly more often than the rest, in the order found. */
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
  labels: RouteLabels;
  counts: RefusalCounts;
  p95LatencyMs: number | undefined;
}

interface Group {
  dimension: RouteDimension;
  value: string;
  members: string[];
}

const LABEL_DIMENSIONS = ['pool', 'country', 'sessionPattern'] as const;
const ZERO: RefusalCounts = { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 };

/** `country=US/pool=p1/sessionPattern=sticky`, labels in a fixed order; `(unlabelled)` when none. */
export function routeKey(labels: RouteLabels): string {
  const parts: string[] = [];
  if (labels.country !== undefined) parts.push(`country=${labels.country}`);
  if (labels.pool !== undefined) parts.push(`pool=${labels.pool}`);
  if (labels.sessionPattern !== undefined) parts.push(`sessionPattern=${labels.sessionPattern}`);
  return parts.length === 0 ? '(unlabelled)' : parts.join('/');
}

function add(a: RefusalCounts, b: RefusalCounts): RefusalCounts {
  return {
    requests: a.requests + b.requests,
    hardBlocks: a.hardBlocks + b.hardBlocks,
    challenges: a.challenges + b.challenges,
    softBlocks: a.softBlocks + b.softBlocks,
  };
}

/** Plain code-unit order: deterministic everywhere, unlike localeCompare. */
const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Routes with identical labels (e.g. reported by two crawler processes) are one route. */
function mergeRoutes(routes: readonly RouteWindow[]): Map<string, MergedRoute> {
  const merged = new Map<string, MergedRoute>();
  for (const r of routes) {
    const labels: RouteLabels = {};
    if (r.country !== undefined) labels.country = r.country;
    if (r.pool !== undefined) labels.pool = r.pool;
    if (r.sessionPattern !== undefined) labels.sessionPattern = r.sessionPattern;
    const key = routeKey(labels);
    const previous = merged.get(key);
    const counts = add(previous?.counts ?? ZERO, r);
    // p95 of merged parts is unknown; their maximum bounds it from above. Unknown if any part lacks it.
    const p95 =
      previous === undefined
        ? r.p95LatencyMs
        : previous.p95LatencyMs === undefined || r.p95LatencyMs === undefined
          ? undefined
          : Math.max(previous.p95LatencyMs, r.p95LatencyMs);
    merged.set(key, { key, labels, counts, p95LatencyMs: p95 });
  }
  return new Map([...merged.entries()].sort(([a], [b]) => byString(a, b)));
}

function failuresOf(c: RefusalCounts): number {
  // Counts may overlap or exceed requests in a malformed aggregate; a rate above 1 breaks the test.
  return Math.min(c.requests, c.hardBlocks + c.challenges + c.softBlocks);
}

function stats(c: RefusalCounts): RouteGroupStats {
  const failures = failuresOf(c);
  return {
    requests: c.requests,
    failures,
    rate: failures / Math.max(1, c.requests),
    interval: wilsonInterval(failures, c.requests),
  };
}

function candidateGroups(routes: Map<string, MergedRoute>, remaining: ReadonlySet<string>): Group[] {
  const groups: Group[] = [];
  const seen = new Set<string>();
  const push = (group: Group): void => {
    const signature = [...group.members].sort(byString).join('\n');
    if (seen.has(signature)) return; // same traffic as a group already listed (e.g. a pool with one route)
    seen.add(signature);
    groups.push(group);
  };
  for (const dimension of LABEL_DIMENSIONS) {
    const byValue = new Map<string, string[]>();
    for (const key of remaining) {
      const value = routes.get(key)?.labels[dimension];
      if (value === undefined) continue;
      byValue.set(value, [...(byValue.get(value) ?? []), key]);
    }
    for (const value of [...byValue.keys()].sort(byString))
      push({ dimension, value, members: byValue.get(value) ?? [] });
  }
  for (const key of remaining) push({ dimension: 'route', value: key, members: [key] });
  return groups;
}

function sumOf(routes: Map<string, MergedRoute>, keys: Iterable<string>): RefusalCounts {
  let total = ZERO;
  for (const key of keys) {
    const r = routes.get(key);
    if (r !== undefined) total = add(total, r.counts);
  }
  return total;
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
  const routes = mergeRoutes(current);
  const baselineRoutes = mergeRoutes(baseline);
  const remaining = new Set(routes.keys());
  const suspects: RouteFinding[] = [];
  let testedGroups = -1;

  for (;;) {
    const tested: Array<{ group: Group; counts: RefusalCounts; rest: RefusalCounts }> = [];
    for (const group of candidateGroups(routes, remaining)) {
      const counts = sumOf(routes, group.members);
      const members = new Set(group.members);
      const rest = sumOf(
        routes,
        [...remaining].filter((k) => !members.has(k)),
      );
      if (counts.requests >= config.minRouteRequests && rest.requests >= config.minRouteRequests)
        tested.push({ group, counts, rest });
    }
    if (testedGroups < 0) testedGroups = tested.length;
    if (tested.length === 0) break;
    const threshold = config.alpha / tested.length;

    let best: RouteFinding | null = null;
    for (const { group, counts, rest } of tested) {
      const now = stats(counts);
      const others = stats(rest);
      const gap = now.rate - others.rate;
      if (gap < config.minRateGap) continue;
      const baseCounts = sumOf(baselineRoutes, group.members);
      const base = baseCounts.requests >= config.minRouteRequests ? stats(baseCounts) : null;
      // A route that always failed this much is its normal, already in the site's baseline: not news.
      if (base !== null && now.rate - base.rate < config.minRateGap) continue;
      const pValue = fisherExactGreater(now.failures, now.requests, others.failures, others.requests);
      if (pValue > threshold) continue;
      const finding: RouteFinding = {
        dimension: group.dimension,
        value: group.value,
        routes: group.members.map((k) => routes.get(k)?.labels ?? {}),
        current: now,
        rest: others,
        baseline: base,
        gap,
        pValue,
        threshold,
      };
      // Most significant first; then the larger gap; then candidate order (deterministic).
      if (best === null || pValue < best.pValue || (pValue === best.pValue && gap > best.gap)) best = finding;
    }
    if (best === null) break;
    suspects.push(best);
    for (const labels of best.routes) remaining.delete(routeKey(labels));
    if (remaining.size === 0) break;
  }

  const totalRequests = sumOf(routes, routes.keys()).requests;
  const suspectCounts = sumOf(
    routes,
    [...routes.keys()].filter((k) => !remaining.has(k)),
  );
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
          routes.size === 0
            ? 'no per-route counts in this window'
            : `no route group and rest with at least ${config.minRouteRequests} requests each to compare`,
        suspects,
        excluded: ZERO,
        suspectShare,
        testedGroups: Math.max(0, testedGroups),
      };
    }
    return {
      verdict: 'site-wide',
      summary: `no route stands out among ${testedGroups} groups tested`,
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
  const suspectKeys = new Set(diagnosis.suspects.flatMap((s) => s.routes.map(routeKey)));
  const routes = mergeRoutes(window.routes);
  const healthy = [...routes.values()].filter((r) => !suspectKeys.has(r.key));
  const routeRequests = [...routes.values()].reduce((n, r) => n + r.counts.requests, 0);
  let p95 = window.p95LatencyMs;
  if (routeRequests === window.requests && healthy.length > 0 && healthy.every((r) => r.p95LatencyMs !== undefined)) {
    p95 = Math.max(...healthy.map((r) => r.p95LatencyMs ?? 0));
  }
  return {
    requests: Math.max(0, window.requests - ex.requests),
    hardBlocks: Math.max(0, window.hardBlocks - ex.hardBlocks),
    challenges: Math.max(0, window.challenges - ex.challenges),
    softBlocks: Math.max(0, window.softBlocks - ex.softBlocks),
    p95LatencyMs: p95,
  };
}
