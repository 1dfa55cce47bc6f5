/**
 * Folding beyond the cardinality cap (aggregate.ts): routes refused by `keep` merge into the site's
 * `other` row of the same bucket at every level, page types into the `(other)` norm of the same day;
 * totals never change, and the kept keys' rows are exactly what they would be without folding.
 */
import fc from 'fast-check';
import {
  ALL_ROUTES,
  BatchAggregator,
  OTHER_LABEL,
  OTHER_PAGE_TYPE,
  OTHER_ROUTES,
  bucketStart,
  routeKey,
  type RollupDelta,
} from '../../../server/db/signal-store/aggregate';
import type { Classification } from '@target-health/crawler/events/classify';
import type { RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { runs } from '../../kit/sizes';

const T0 = Date.UTC(2026, 10, 29, 23, 50);
const ok: Classification = { outcome: 'ok', rule: 'status', reason: 'status 200' };

const eventArb = fc.record({
  ts: fc.integer({ min: T0, max: T0 + 40 * 60_000 }),
  site: fc.constantFrom('a.example.com', 'b.example.com'),
  pool: fc.integer({ min: 0, max: 30 }),
  pageType: fc.integer({ min: 0, max: 12 }),
  bytes: fc.nat(100_000),
  retries: fc.nat(3),
});

function toEvent(r: {
  ts: number;
  site: string;
  pool: number;
  pageType: number;
  bytes: number;
  retries: number;
}): RequestOutcomeEvent {
  return {
    ts: r.ts,
    site: r.site,
    route: { country: 'DE', pool: `p${r.pool}` },
    pageType: `t${r.pageType}`,
    status: 200,
    latencyMs: 10,
    bytes: r.bytes,
    retries: r.retries,
  };
}

const total = (deltas: readonly RollupDelta[], pick: (d: RollupDelta) => boolean) =>
  deltas
    .filter(pick)
    .reduce(
      (n, d) => ({ requests: n.requests + d.requests, bytes: n.bytes + d.bytes, retries: n.retries + d.retries }),
      { requests: 0, bytes: 0, retries: 0 },
    );

test('refused routes and page types fold into "other"; totals and kept rows are unchanged', () => {
  fc.assert(
    fc.property(
      fc.array(eventArb, { maxLength: 150 }),
      fc.integer({ min: 0, max: 31 }),
      fc.integer({ min: 0, max: 13 }),
      (raw, routeCap, typeCap) => {
        const agg = new BatchAggregator();
        for (const r of raw) agg.add(toEvent(r), ok);
        // Keep the first `cap` keys of each site and day, as the guard would (sorted).
        const keepFirst = (byDay: Map<string, { keys: Set<string> }>, cap: number) => {
          const kept = new Map([...byDay].map(([id, e]) => [id, new Set([...e.keys].sort().slice(0, cap))]));
          return (site: string, day: number, key: string) => kept.get(`${site}\u0000${day}`)?.has(key) ?? false;
        };
        const keepRoute = keepFirst(agg.routeKeysByDay(), routeCap);
        const keepType = keepFirst(agg.pageTypesByDay(), typeCap);
        const plain = agg.rollups();
        const folded = agg.rollups(keepRoute);
        for (const level of ['minute', 'hour', 'day'] as const) {
          const buckets = new Set(plain[level].map((d) => `${d.site} ${d.bucket}`));
          for (const b of buckets) {
            const inBucket = (d: RollupDelta) => `${d.site} ${d.bucket}` === b;
            // Per site and bucket: the routes' sum is the all-routes row, folded or not.
            expect(total(folded[level], (d) => inBucket(d) && d.routeKey !== ALL_ROUTES)).toEqual(
              total(plain[level], (d) => inBucket(d) && d.routeKey !== ALL_ROUTES),
            );
            const routes = folded[level].filter(
              (d) => inBucket(d) && d.routeKey !== ALL_ROUTES && d.routeKey !== OTHER_ROUTES,
            );
            for (const d of routes) expect(keepRoute(d.site, bucketStart('day', d.bucket), d.routeKey)).toBe(true);
            expect(folded[level].filter((d) => inBucket(d) && d.routeKey === OTHER_ROUTES).length).toBeLessThanOrEqual(
              1,
            );
          }
          // Kept routes' rows are identical to the unfolded ones.
          const kept = (d: RollupDelta) =>
            d.routeKey === ALL_ROUTES || keepRoute(d.site, bucketStart('day', d.bucket), d.routeKey);
          expect(folded[level].filter((d) => d.routeKey !== OTHER_ROUTES)).toEqual(plain[level].filter(kept));
          for (const d of folded[level].filter((x) => x.routeKey === OTHER_ROUTES))
            expect([d.country, d.pool, d.session, d.latencyHist]).toEqual([
              OTHER_LABEL,
              OTHER_LABEL,
              OTHER_LABEL,
              null,
            ]);
        }
        const norms = agg.normDeltas(keepType);
        const plainNorms = agg.normDeltas();
        const sum = (list: typeof norms) => list.reduce((n, d) => n + d.responses, 0);
        expect(sum(norms)).toBe(sum(plainNorms));
        for (const d of norms)
          if (d.pageType !== OTHER_PAGE_TYPE) expect(keepType(d.site, d.day, d.pageType)).toBe(true);
        expect(new Set(norms.map((d) => `${d.site} ${d.pageType} ${d.day}`)).size).toBe(norms.length);
      },
    ),
    { numRuns: runs(300) },
  );
});

test('routeKeysByDay and pageTypesByDay list each site-day with its distinct keys', () => {
  const agg = new BatchAggregator();
  const day = Date.UTC(2026, 10, 29);
  for (const [i, ts] of [T0, T0 + 1, T0 + 20 * 60_000].entries())
    agg.add(toEvent({ ts, site: 'a.example.com', pool: i % 2, pageType: i, bytes: 1, retries: 0 }), ok);
  const next = Date.UTC(2026, 10, 30);
  expect([...agg.routeKeysByDay().values()].map((e) => [e.day, [...e.keys].sort()])).toEqual([
    [day, [routeKey({ country: 'DE', pool: 'p0' }), routeKey({ country: 'DE', pool: 'p1' })]],
    [next, [routeKey({ country: 'DE', pool: 'p0' })]],
  ]);
  expect([...agg.pageTypesByDay().values()].map((e) => [e.day, [...e.keys].sort()])).toEqual([
    [day, ['t0', 't1']],
    [next, ['t2']],
  ]);
});
