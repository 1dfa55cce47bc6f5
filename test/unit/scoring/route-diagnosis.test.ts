import {
  type RouteWindow,
  type Window,
  type WindowInput,
  assess,
  diagnoseRoutes,
  healthScore,
  healthyRoutesWindow,
  makeWindow,
  parseScoringConfig,
} from '../../../core/scoring';

/** A route with `requests` requests and the given refusals; p95 given so the healthy-route bound applies. */
const route = (
  labels: Partial<Pick<RouteWindow, 'country' | 'pool' | 'sessionPattern'>>,
  requests: number,
  hardBlocks: number,
  challenges = 0,
  softBlocks = 0,
  p95LatencyMs = 400,
): RouteWindow => ({
  ...labels,
  requests,
  hardBlocks,
  challenges,
  softBlocks,
  p95LatencyMs,
});

/** A site window whose totals are the sum of its routes (p95 = the largest route p95). */
function siteWindow(routes: RouteWindow[], extra: Partial<WindowInput> = {}): Window {
  const sum = (f: 'requests' | 'hardBlocks' | 'challenges' | 'softBlocks') => routes.reduce((n, r) => n + r[f], 0);
  return makeWindow({
    requests: sum('requests'),
    hardBlocks: sum('hardBlocks'),
    challenges: sum('challenges'),
    softBlocks: sum('softBlocks'),
    p95LatencyMs: routes.reduce((m, r) => Math.max(m, r.p95LatencyMs ?? 0), 0),
    routes,
    ...extra,
  });
}

/** `ticks` assessments of the same window a minute apart, each handed what the previous one carried. */
function assessTicks(current: Window, base: Window, ticks: number): ReturnType<typeof assess>[] {
  const out: ReturnType<typeof assess>[] = [];
  for (let i = 0; i < ticks; i++) {
    const carry = out[i - 1]?.carry;
    out.push(
      assess({
        current,
        baseline: base,
        previousRefusal: carry?.refusalStreak ?? 0,
        previous: carry ?? {},
        at: Date.UTC(2026, 0, 1, 12, i),
      }),
    );
  }
  return out;
}

const POOLS = ['p1', 'p2', 'p3', 'p4', 'p5'];
/** Normal for this site: 2% hard blocks, 1% challenges, p95 400 ms on every pool. */
const baselineRoutes = [...POOLS, 'dead'].map((pool) => route({ pool }, 2000, 40, 20));
const baseline = siteWindow(baselineRoutes);

describe('route diagnosis scenarios', () => {
  test('one dead pool among five healthy ones → route-specific, and the score is unaffected', () => {
    // Healthy pools: 200 requests each, 4 hard blocks (2%), 2 challenges (1%) — exactly the baseline rates.
    // Dead pool: every one of its 200 requests refused, answered fast (50 ms).
    const healthy = POOLS.map((pool) => route({ pool }, 200, 4, 2));
    const current = siteWindow([...healthy, route({ pool: 'dead' }, 200, 200, 0, 0, 50)]);

    // Watched on the first two ticks (its traffic still in the score), confirmed on the third.
    const [first, second, a] = assessTicks(current, baseline, 3) as [
      ReturnType<typeof assess>,
      ReturnType<typeof assess>,
      ReturnType<typeof assess>,
    ];
    for (const watched of [first, second]) {
      expect(watched.routes.verdict).toBe('site-wide');
      expect(watched.routes.watching).toEqual([expect.objectContaining({ dimension: 'pool', value: 'dead' })]);
      expect(watched.health.score).toBe(71);
    }
    expect(a.routes.newlyConfirmed).toEqual(['pool:dead']);
    expect(a.routes.verdict).toBe('route-specific');
    expect(a.routes.suspects.map((s) => [s.dimension, s.value])).toEqual([['pool', 'dead']]);
    expect(a.reasons).toContain('route_specific');
    expect(a.health.scope).toBe('healthy-routes');

    // Without the split the dead pool would drag the site down: hb 220/1200 = 0.1833 - 0.02 = 0.1633;
    // /0.2 = 0.8167; × 35 = 28.58; challenges 10/1200 < 1% → 0; 100 - 28.58 = 71.42 → 71 (degrading).
    expect(healthScore(current, baseline).score).toBe(71);
    // With it, the site is judged on its healthy routes: rates equal the baseline → 100.
    expect(a.health.score).toBe(100);
    // "Unaffected": the same as if the dead pool had carried no traffic at all.
    const withoutDeadPool = assess({ current: siteWindow(healthy), baseline });
    // It stays set aside while it keeps failing, and no new alert is due for it.
    const later = assess({ current, baseline, previous: a.carry ?? {}, at: Date.UTC(2026, 0, 1, 12, 3) });
    expect(later.routes.verdict).toBe('route-specific');
    expect(later.routes.newlyConfirmed).toEqual([]);
    expect(a.health.score).toBe(withoutDeadPool.health.score);
    expect(a.health.window).toEqual({
      requests: 1000,
      hardBlocks: 20,
      challenges: 10,
      softBlocks: 0,
      p95LatencyMs: 400,
    });
  });

  test('a dead pool that only serves one country does not get that country blamed too', () => {
    // Each healthy pool serves US and DE (100 requests each, 2% blocked); the dead pool serves only US,
    // so the US as a whole fails 30% of the time — but only because of the dead pool.
    const healthy = POOLS.flatMap((pool) => [
      route({ pool, country: 'US' }, 100, 2),
      route({ pool, country: 'DE' }, 100, 2),
    ]);
    const d = diagnoseRoutes([...healthy, route({ pool: 'dead', country: 'US' }, 200, 200)], []);
    expect(d.verdict).toBe('route-specific');
    expect(d.suspects.map((s) => `${s.dimension}:${s.value}`)).toEqual(['pool:dead']);
  });

  test('all routes degrading together → site-wide, and the score covers all traffic', () => {
    // Every pool: 30% challenges against a 1% baseline.
    const current = siteWindow([...POOLS, 'dead'].map((pool) => route({ pool }, 200, 4, 60)));
    const a = assess({ current, baseline });
    expect(a.routes.verdict).toBe('site-wide');
    expect(a.routes.suspects).toEqual([]);
    expect(a.health.scope).toBe('site');
    // hb 24/1200 = 0.02 → 0; ch 360/1200 = 0.3 - 0.01 = 0.29 → capped → 25; 100 - 25 = 75.
    expect(a.health.score).toBe(75);
    expect(a.health.score).toBe(healthScore(current, baseline).score);
    expect(a.reasons).not.toContain('route_specific');
  });

  test('too little traffic per route → insufficient data (and the site-level score is used)', () => {
    // Six routes of 10 requests: none reaches the 30-request minimum, even the one failing completely.
    const current = siteWindow([...POOLS.map((pool) => route({ pool }, 10, 0)), route({ pool: 'dead' }, 10, 10)]);
    const a = assess({ current, baseline });
    expect(a.routes.verdict).toBe('insufficient-data');
    expect(a.routes.testedGroups).toBe(0);
    expect(a.health.scope).toBe('site');
    // 60 requests ≥ 50: scored on the whole window: hb 10/60 = 0.1667 - 0.02 = 0.1467 → 0.733 × 35 = 25.67 → 74.
    expect(a.health.score).toBe(74);
  });

  test('no per-route counts at all → insufficient data', () => {
    expect(diagnoseRoutes([], []).verdict).toBe('insufficient-data');
  });

  test('one route only → insufficient data: there is nothing to compare it with', () => {
    expect(diagnoseRoutes([route({ pool: 'p1' }, 5000, 5000)], []).verdict).toBe('insufficient-data');
  });

  test('a route that always failed this much is its normal, not a route problem', () => {
    // Pool "strict" has always had 40% challenges (baseline 800/2000); it still does.
    const current = [...POOLS.map((pool) => route({ pool }, 200, 4)), route({ pool: 'strict' }, 200, 0, 80)];
    const base = [...POOLS.map((pool) => route({ pool }, 2000, 40)), route({ pool: 'strict' }, 2000, 0, 800)];
    expect(diagnoseRoutes(current, base).suspects).toEqual([]);
    // The same pool without that history would be blamed.
    expect(diagnoseRoutes(current, []).suspects.map((s) => s.value)).toEqual(['strict']);
  });

  test('failing routes carrying most of the traffic → site-wide (the site, not a route)', () => {
    // Two of three pools dead, carrying 2/3 of the requests (> 50%).
    const d = diagnoseRoutes(
      [route({ pool: 'a' }, 300, 3), route({ pool: 'b' }, 300, 300), route({ pool: 'c' }, 300, 300)],
      [],
    );
    expect(d.verdict).toBe('site-wide');
    expect(d.suspects.map((s) => s.value).sort()).toEqual(['b', 'c']);
    expect(d.suspectShare).toBeCloseTo(2 / 3, 12);
    expect(d.excluded).toEqual({ requests: 0, hardBlocks: 0, challenges: 0, softBlocks: 0 });
  });

  test('small samples: a clear gap on 30 requests is blamed, a noisy one is not', () => {
    // 12/30 (40%) vs 6/300 (2%): one-sided Fisher p = 4.08e-10 (exact hypergeometric tail), far below
    // 0.01 / 3 groups tested.
    const clear = diagnoseRoutes(
      [route({ pool: 'a' }, 150, 3), route({ pool: 'b' }, 150, 3), route({ pool: 'x' }, 30, 12)],
      [],
    );
    expect(clear.suspects.map((s) => s.value)).toEqual(['x']);
    expect(clear.suspects[0]?.pValue).toBeCloseTo(4.0826e-10, 13);
    // 4/30 (13%) vs 6/300 (2%): the gap is above 10 points, but p = 0.0080 > 0.01 / 3 = 0.0033 — four
    // failures in thirty requests are not enough evidence to pull a route out of the site's score.
    const noisy = diagnoseRoutes(
      [route({ pool: 'a' }, 150, 3), route({ pool: 'b' }, 150, 3), route({ pool: 'x' }, 30, 4)],
      [],
    );
    expect(noisy.suspects).toEqual([]);
    expect(noisy.verdict).toBe('site-wide');
  });

  test('routes with the same labels are merged; labels select the dimension', () => {
    const d = diagnoseRoutes(
      [
        route({ sessionPattern: 'sticky' }, 100, 1),
        route({ sessionPattern: 'sticky' }, 100, 1),
        route({ sessionPattern: 'rotating' }, 100, 100),
        route({ sessionPattern: 'burst' }, 200, 2),
      ],
      [],
    );
    expect(d.suspects.map((s) => [s.dimension, s.value, s.current.requests])).toEqual([
      ['sessionPattern', 'rotating', 100],
    ]);
  });

  test('healthyRoutesWindow keeps the site p95 when routes do not account for all traffic', () => {
    const routes = [...POOLS.map((pool) => route({ pool }, 200, 4)), route({ pool: 'dead' }, 200, 200)];
    // 100 unlabelled requests beyond the routes: the route p95s no longer bound the remainder.
    const current = siteWindow(routes, { requests: 1300, p95LatencyMs: 900 });
    const d = diagnoseRoutes(current.routes, []);
    expect(healthyRoutesWindow(current, d)).toEqual({
      requests: 1100,
      hardBlocks: 20,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 900,
    });
  });

  test("healthyRoutesWindow over 130,000 routes (past the engine's argument limit: no spread into Math.max)", () => {
    // 130,000 healthy routes (one pool each, 40 requests, p95 100-1099 ms) and one dead pool.
    const routes = Array.from({ length: 130_000 }, (_, i) => route({ pool: `ip-${i}` }, 40, 0, 0, 0, 100 + (i % 1000)));
    routes.push(route({ pool: 'dead' }, 5000, 5000, 0, 0, 50));
    const current = siteWindow(routes);
    const d = diagnoseRoutes(current.routes, []);
    expect(d.suspects.map((s) => s.value)).toEqual(['dead']);
    expect(d.verdict).toBe('route-specific');
    expect(healthyRoutesWindow(current, d)).toEqual({
      requests: 5_200_000,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      p95LatencyMs: 1099,
    });
  });
});

describe("errors count as a route's failures (routes.countErrors)", () => {
  /** Pools a and b fine; pool c's requests all ended in a network error (a dead proxy): no refusal at all. */
  const dead: RouteWindow[] = [
    { pool: 'a', requests: 200, hardBlocks: 2, challenges: 0, softBlocks: 0 },
    { pool: 'b', requests: 200, hardBlocks: 2, challenges: 0, softBlocks: 0 },
    { pool: 'c', requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0, errors: 200 },
  ];

  test('a dead proxy is the suspect, its errors counted as failures', () => {
    const d = diagnoseRoutes(dead, []);
    expect(d.verdict).toBe('route-specific');
    expect(d.suspects.map((s) => [s.dimension, s.value, s.current.failures, s.current.rate])).toEqual([
      ['pool', 'c', 200, 1],
    ]);
    expect(d.suspects[0]!.rest).toMatchObject({ requests: 400, failures: 4 });
    // What the score leaves out is the route's requests and refusals (errors are never in the score).
    expect(d.excluded).toEqual({ requests: 200, hardBlocks: 0, challenges: 0, softBlocks: 0 });
  });

  test('off: errors are not failures, and the dead proxy is no suspect', () => {
    const routes = { ...parseScoringConfig({}).routes, countErrors: false };
    expect(diagnoseRoutes(dead, [], routes).suspects).toEqual([]);
  });

  test("errors spread evenly over the routes (the site failing, or the crawler's own network) blame no route", () => {
    const even = ['a', 'b', 'c'].map((pool) => ({
      pool,
      requests: 200,
      hardBlocks: 0,
      challenges: 0,
      softBlocks: 0,
      errors: 60,
    }));
    const d = diagnoseRoutes(even, []);
    expect(d.verdict).toBe('site-wide');
    expect(d.suspects).toEqual([]);
  });

  test('a route that always errored this much is its normal: not news', () => {
    const base = [
      { pool: 'a', requests: 2000, hardBlocks: 20, challenges: 0, softBlocks: 0 },
      { pool: 'b', requests: 2000, hardBlocks: 20, challenges: 0, softBlocks: 0 },
      { pool: 'c', requests: 2000, hardBlocks: 0, challenges: 0, softBlocks: 0, errors: 1900 },
    ];
    const d = diagnoseRoutes(dead, base);
    expect(d.suspects).toEqual([]);
  });

  test('the watch confirms a dead proxy on fresh evidence from its errors', () => {
    const current = siteWindow(dead, {
      recent: { requests: 600, hardBlocks: 4, challenges: 0, softBlocks: 0, routes: dead },
    });
    const ticks = assessTicks(
      current,
      siteWindow(dead.map((r) => ({ ...r, requests: r.requests * 10, hardBlocks: 20, errors: 0 }))),
      3,
    );
    expect(ticks.map((a) => a.routes.verdict)).toEqual(['site-wide', 'site-wide', 'route-specific']);
    expect(ticks[2]!.routes.suspects.map((s) => s.value)).toEqual(['c']);
    // Errors are not refusals: the site's score is the seed's over its refusals, unaffected throughout.
    expect(ticks.map((a) => a.health.score)).toEqual([100, 100, 100]);
  });
});
