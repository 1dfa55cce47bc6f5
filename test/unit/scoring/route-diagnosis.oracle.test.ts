/**
 * The near-linear route diagnosis against the first version (test/kit/reference/route-diagnosis-v1.ts),
 * which re-summed every group and its rest from scratch each round. On the inputs a site produces —
 * a handful to a few dozen routes whose pools, countries and session patterns overlap, some dead or
 * degraded, with or without a baseline, under any valid route configuration — both must give the same
 * diagnosis, number for number, and the same healthy-routes window. The only intended differences:
 * a finding lists at most MAX_LISTED_ROUTES of its routes (with `routeCount`), and more than
 * MAX_SUSPECTS independent suspects is site-wide.
 */
import fc from 'fast-check';
import {
  type RouteConfig,
  type RouteWindow,
  type Window,
  diagnoseRoutes,
  healthyRoutesWindow,
  makeWindow,
  parseScoringConfig,
} from '../../../core/scoring';
import { MAX_LISTED_ROUTES, MAX_SUSPECTS, type RouteDiagnosis } from '../../../core/scoring/route-diagnosis';
import * as v1 from '../../kit/reference/route-diagnosis-v1';
import { runs } from '../../kit/sizes';

/** Small label alphabets so that groups overlap (a pool serving several countries, …); absent labels too. */
const label = (values: readonly string[]) => fc.option(fc.constantFrom(...values), { nil: undefined, freq: 4 });

const route: fc.Arbitrary<RouteWindow> = fc
  .record({
    country: label(['US', 'DE', 'FR', 'BR']),
    pool: label(['p1', 'p2', 'p3', 'dead', 'p5', 'p6']),
    sessionPattern: label(['sticky', 'rotating', 'burst']),
    requests: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 2000 })),
    // Share of the requests refused: mostly normal (0-5%), some degraded, some dead.
    refused: fc.oneof(
      { weight: 6, arbitrary: fc.double({ min: 0, max: 0.05, noNaN: true }) },
      { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
      { weight: 1, arbitrary: fc.constant(1) },
    ),
    split: fc.tuple(fc.nat(10), fc.nat(10), fc.nat(10)),
    // Malformed aggregates (more refusals than requests) must be handled alike.
    extra: fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(50) }),
    p95LatencyMs: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined, freq: 5 }),
  })
  .map(({ country, pool, sessionPattern, requests, refused, split, extra, p95LatencyMs }) => {
    const failures = Math.round(requests * refused);
    const [a, b, c] = split;
    const parts = a + b + c === 0 ? [1, 0, 0] : [a, b, c];
    const total = parts[0]! + parts[1]! + parts[2]!;
    const hardBlocks = Math.floor((failures * parts[0]!) / total);
    const challenges = Math.floor((failures * parts[1]!) / total);
    const r: RouteWindow = {
      requests,
      hardBlocks: hardBlocks + extra,
      challenges,
      softBlocks: failures - hardBlocks - challenges,
    };
    if (country !== undefined) r.country = country;
    if (pool !== undefined) r.pool = pool;
    if (sessionPattern !== undefined) r.sessionPattern = sessionPattern;
    if (p95LatencyMs !== undefined) r.p95LatencyMs = p95LatencyMs;
    return r;
  });

const routes = (max: number) => fc.array(route, { maxLength: max });

const routeConfig: fc.Arbitrary<RouteConfig> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(parseScoringConfig({}).routes) },
  {
    weight: 3,
    arbitrary: fc
      .record({
        minRouteRequests: fc.integer({ min: 0, max: 100 }),
        minRateGap: fc.double({ min: 0, max: 0.5, noNaN: true }),
        alpha: fc.double({ min: 1e-6, max: 0.5, noNaN: true }),
        maxBadShare: fc.double({ min: 0.05, max: 1, noNaN: true }),
      })
      .map((routes) => parseScoringConfig({ routes }).routes),
  },
);

/**
 * What the new version reports for what the first version found (see the header). Past MAX_SUSPECTS
 * the share counts the suspects listed, and the summary says why it is site-wide (checked apart). Counts of one
 * are said in the singular.
 */
function expected(old: v1.RouteDiagnosis, current: readonly RouteWindow[]): RouteDiagnosis {
  const suspects = old.suspects.map((s) => ({
    ...s,
    routes: s.routes.slice(0, MAX_LISTED_ROUTES),
    routeCount: s.routes.length,
  }));
  // The first version said "1 groups tested" and "at least 1 requests each"; the new one counts in the singular.
  const summary = old.summary
    .replace(/\b1 groups tested$/, '1 group tested')
    .replace(/\b1 requests each/, '1 request each');
  if (suspects.length <= MAX_SUSPECTS) return { ...old, summary, suspects };
  const listed = suspects.slice(0, MAX_SUSPECTS);
  const total = current.reduce((n, r) => n + r.requests, 0);
  return {
    ...old,
    verdict: 'site-wide',
    summary: expect.stringMatching(
      /^more than 20 route groups fail independently: treated as the site's doing \(first 20: /,
    ),
    suspects: listed,
    excluded: { requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 },
    suspectShare: listed.reduce((n, s) => n + s.current.requests, 0) / total,
  };
}

function siteWindow(rs: RouteWindow[], unlabelled: number): Window {
  const sum = (f: 'requests' | 'hardBlocks' | 'challenges' | 'softBlocks') => rs.reduce((n, r) => n + r[f], 0);
  return makeWindow({
    requests: sum('requests') + unlabelled,
    hardBlocks: sum('hardBlocks'),
    challenges: sum('challenges'),
    softBlocks: sum('softBlocks'),
    p95LatencyMs: 700,
    routes: rs,
  });
}

describe('route diagnosis equals the first version', () => {
  test('same diagnosis on realistic route mixes, with and without a baseline, under any route config', () => {
    let withSuspects = 0;
    let multiRound = 0;
    const cases = runs(10_000);
    fc.assert(
      fc.property(routes(40), fc.option(routes(40), { nil: undefined }), routeConfig, (current, baseline, config) => {
        const old = v1.diagnoseRoutes(current, baseline ?? [], config);
        const now = diagnoseRoutes(current, baseline ?? [], config);
        if (old.suspects.length > 0) withSuspects++;
        if (old.suspects.length > 1) multiRound++;
        expect(now).toEqual(expected(old, current));
      }),
      { numRuns: cases },
    );
    // The comparison means something only if the generator reaches the interesting cases.
    expect(withSuspects).toBeGreaterThan(cases / 10);
    expect(multiRound).toBeGreaterThan(cases / 50);
  });

  test('the healthy-routes window is the same', () => {
    fc.assert(
      fc.property(routes(30), fc.oneof(fc.constant(0), fc.nat(500)), routeConfig, (rs, unlabelled, config) => {
        const window = siteWindow(rs, unlabelled);
        const old = v1.diagnoseRoutes(window.routes, [], config);
        const now = diagnoseRoutes(window.routes, [], config);
        expect(healthyRoutesWindow(window, now)).toEqual(v1.healthyRoutesWindow(window, old));
      }),
      { numRuns: runs(3000) },
    );
  });

  test('many routes: a dead pool among hundreds of routes is found exactly as before', () => {
    // 600 routes (20 countries × 10 pools × 3 session patterns), 2% refused, pool p7 dead in country C3 only.
    const rs: RouteWindow[] = [];
    for (let c = 0; c < 20; c++)
      for (let p = 0; p < 10; p++)
        for (const sessionPattern of ['sticky', 'rotating', 'burst']) {
          const dead = p === 7 && c === 3;
          const requests = 40 + ((c * 7 + p * 13) % 50);
          rs.push({
            country: `C${c}`,
            pool: `p${p}`,
            sessionPattern,
            requests,
            hardBlocks: dead ? requests : Math.floor(requests / 50),
            challenges: 0,
            softBlocks: 0,
          });
        }
    const old = v1.diagnoseRoutes(rs, []);
    const now = diagnoseRoutes(rs, []);
    expect(now.verdict).toBe('route-specific');
    expect(now).toEqual(expected(old, rs));
  });

  test('more than MAX_SUSPECTS independent failing groups is the site: site-wide, the first ones listed', () => {
    // 40 pools, one route each; 25 of them fail completely but carry only 25% of the traffic.
    const rs: RouteWindow[] = Array.from({ length: 100 }, (_, i) => ({
      pool: `p${String(i).padStart(3, '0')}`,
      requests: 200,
      hardBlocks: i < 25 ? 200 : 2,
      challenges: 0,
      softBlocks: 0,
    }));
    const old = v1.diagnoseRoutes(rs, []);
    expect(old.verdict).toBe('route-specific');
    expect(old.suspects).toHaveLength(25);
    const now = diagnoseRoutes(rs, []);
    expect(now.verdict).toBe('site-wide');
    expect(now.suspectShare).toBe(0.2);
    expect(now).toEqual(expected(old, rs));
  });
});
