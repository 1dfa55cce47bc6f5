/**
 * The simulated crawler fleet: its routes (country × proxy pool × session pattern) with their traffic
 * shares, and what a normal page of each type looks like (size, latency, records). Shared by every
 * scenario, so the scenarios differ only in what happens to this traffic.
 *
 * The route table is built so that route diagnosis has a fair problem to solve: the pool `dc-3` (12 % of
 * traffic) serves three countries, and the country `BR` (9 %) is spread over three pools, so a dead pool
 * is not a dead country and the other way round.
 */

export interface RouteSpec {
  country: string;
  pool: string;
  session: string;
  /** Traffic weight (relative). */
  weight: number;
  /** Latency multiple of the route (residential and mobile exits are slower than datacenter ones). */
  latency: number;
  /** Credits one request costs on this pool. */
  credits: number;
}

const route = (country: string, pool: string, session: string, weight: number): RouteSpec => {
  const kind = pool.split('-')[0];
  const latency = kind === 'dc' ? 0.7 : kind === 'mobile' ? 1.8 : 1.3;
  const credits = kind === 'dc' ? 1 : kind === 'mobile' ? 5 : 3;
  return { country, pool, session, weight, latency, credits };
};

export const ROUTES: readonly RouteSpec[] = [
  route('DE', 'residential-eu', 'sticky-10m', 14),
  route('FR', 'residential-eu', 'sticky-10m', 8),
  route('GB', 'residential-eu', 'rotating', 8),
  route('US', 'residential-us', 'sticky-10m', 12),
  route('US', 'residential-us', 'rotating', 8),
  route('BR', 'residential-us', 'rotating', 3),
  route('US', 'dc-1', 'rotating', 9),
  route('DE', 'dc-1', 'rotating', 5),
  route('US', 'dc-2', 'rotating', 6),
  route('GB', 'dc-2', 'rotating', 4),
  route('DE', 'dc-3', 'rotating', 4),
  route('US', 'dc-3', 'rotating', 5),
  route('BR', 'dc-3', 'rotating', 3),
  route('JP', 'mobile-apac', 'sticky-30m', 6),
  route('BR', 'mobile-latam', 'sticky-30m', 3),
];
export const ROUTE_WEIGHTS: readonly number[] = ROUTES.map((r) => r.weight);
export const ROUTE_WEIGHT_TOTAL = ROUTE_WEIGHTS.reduce((a, b) => a + b, 0);

export const PAGE_TYPES = ['product', 'listing', 'search'] as const;
export type PageType = (typeof PAGE_TYPES)[number];

export interface PageProfile {
  /** Share of requests. */
  weight: number;
  /** Median body size of a normal page, and its log-space spread. */
  medianBytes: number;
  bytesSigma: number;
  /** Median latency of a normal page (ms) before the route's multiple, and its log-space spread. */
  medianLatencyMs: number;
  latencySigma: number;
  /** Valid records of a normal page. */
  records: readonly [number, number];
  /**
   * Share of normal pages that legitimately yield nothing (a search without results, an empty
   * category). Searches come back empty often enough (15 %) that the classifier's empty-extraction rule
   * stays off for them (it needs records ≥ 90 % of the time); an empty category is rare, and such a
   * page is one the classifier will call a soft block — a real false positive it has to live with.
   */
  legitEmpty: number;
  /** Size of a legitimately empty page, as a share of the normal median (still far above a block page). */
  emptySizeShare: number;
}

export const PAGES: Readonly<Record<PageType, PageProfile>> = {
  product: {
    weight: 0.5,
    medianBytes: 160_000,
    bytesSigma: 0.18,
    medianLatencyMs: 420,
    latencySigma: 0.45,
    records: [1, 1],
    legitEmpty: 0,
    emptySizeShare: 1,
  },
  listing: {
    weight: 0.3,
    medianBytes: 240_000,
    bytesSigma: 0.2,
    medianLatencyMs: 600,
    latencySigma: 0.45,
    records: [12, 48],
    legitEmpty: 0.002,
    emptySizeShare: 0.5,
  },
  search: {
    weight: 0.2,
    medianBytes: 130_000,
    bytesSigma: 0.22,
    medianLatencyMs: 750,
    latencySigma: 0.5,
    records: [1, 24],
    legitEmpty: 0.15,
    emptySizeShare: 0.45,
  },
};
export const PAGE_WEIGHTS: readonly number[] = PAGE_TYPES.map((p) => PAGES[p].weight);
