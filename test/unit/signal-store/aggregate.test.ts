/**
 * Batch aggregation: hour and day deltas are merged from minute deltas; they must equal a direct,
 * per-event aggregation at each level (the straightforward definition, written out here).
 */
import fc from 'fast-check';
import {
  ALL_ROUTES,
  BatchAggregator,
  bucketStart,
  routeKey,
  type ClassifiedEvent,
  type RollupDelta,
  type RollupLevel,
} from '../../../server/db/signal-store/aggregate';
import { LATENCY_HISTOGRAM, bucketIndex } from '../../../core/signals/histogram';
import type { Outcome, RequestOutcomeEvent } from '@target-health/crawler/events/event';
import { runs } from '../../kit/sizes';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 29, 22, 0, 0);

const classifiedArb: fc.Arbitrary<ClassifiedEvent> = fc
  .record({
    ts: fc.integer({ min: T0, max: T0 + 2 * DAY }),
    site: fc.constantFrom('a.example.com', 'b.example.com'),
    country: fc.option(fc.constantFrom('DE', 'US'), { nil: undefined }),
    pool: fc.option(fc.constantFrom('res', 'dc'), { nil: undefined }),
    latencyMs: fc.integer({ min: 0, max: 700_000 }),
    bytes: fc.option(fc.nat(200_000), { nil: undefined }),
    retries: fc.option(fc.nat(3), { nil: undefined }),
    credits: fc.option(fc.constantFrom(0.5, 1, 2), { nil: undefined }),
    extraction: fc.option(fc.constantFrom('ok', 'missing_fields', 'schema_mismatch', 'empty'), { nil: undefined }),
    canary: fc.boolean(),
    outcome: fc.constantFrom<Outcome>('ok', 'hard_block', 'challenge', 'soft_block', 'error'),
  })
  .map((r) => {
    const event: RequestOutcomeEvent = {
      ts: r.ts,
      site: r.site,
      route: { ...(r.country ? { country: r.country } : {}), ...(r.pool ? { pool: r.pool } : {}) },
      latencyMs: r.latencyMs,
      status: 200,
      ...(r.bytes !== undefined ? { bytes: r.bytes } : {}),
      ...(r.retries !== undefined ? { retries: r.retries } : {}),
      ...(r.credits !== undefined ? { credits: r.credits } : {}),
      ...(r.extraction ? { extraction: { result: r.extraction, validRecords: r.extraction === 'ok' ? 2 : 0 } } : {}),
      ...(r.canary ? { canary: true } : {}),
    };
    return { event, classification: { outcome: r.outcome, rule: 'status', reason: 'test' } };
  });

/** Every additive field of a delta (requests aside): each must add up at every level. */
const COUNTED = [
  'ok',
  'hardBlocks',
  'challenges',
  'softBlocks',
  'errors',
  'extractionOk',
  'extractionMissing',
  'extractionSchema',
  'extractionEmpty',
  'validRecords',
  'retries',
  'bytes',
  'credits',
  'canaryRuns',
  'canaryFailures',
] as const satisfies ReadonlyArray<keyof RollupDelta>;

/** The definition: every event counted into its (site, bucket, route) row and the all-routes row. */
function direct(events: readonly ClassifiedEvent[], level: RollupLevel): Map<string, Partial<RollupDelta>> {
  type Row = Record<(typeof COUNTED)[number], number> & { requests: number; hist: Map<number, number> };
  const out = new Map<string, Row>();
  const emptyRow = (): Row => ({
    ...(Object.fromEntries(COUNTED.map((f) => [f, 0])) as Record<(typeof COUNTED)[number], number>),
    requests: 0,
    hist: new Map<number, number>(),
  });
  for (const { event: e, classification: c } of events) {
    const bucket = bucketStart(level, e.ts);
    for (const rk of [ALL_ROUTES, routeKey(e.route)]) {
      const key = `${e.site} ${bucket} ${rk}`;
      const d = out.get(key) ?? emptyRow();
      d.requests += 1;
      if (c.outcome === 'ok') d.ok += 1;
      if (c.outcome === 'hard_block') d.hardBlocks += 1;
      if (c.outcome === 'challenge') d.challenges += 1;
      if (c.outcome === 'soft_block') d.softBlocks += 1;
      if (c.outcome === 'error') d.errors += 1;
      if (['ok', 'error'].includes(c.outcome)) {
        if (e.extraction?.result === 'ok') d.extractionOk += 1;
        if (e.extraction?.result === 'missing_fields') d.extractionMissing += 1;
        if (e.extraction?.result === 'schema_mismatch') d.extractionSchema += 1;
        if (e.extraction?.result === 'empty') d.extractionEmpty += 1;
      }
      d.validRecords += e.extraction?.validRecords ?? 0;
      d.retries += e.retries ?? 0;
      d.bytes += e.bytes ?? 0;
      d.credits += e.credits ?? 0;
      if (e.canary) {
        d.canaryRuns += 1;
        if (c.outcome !== 'ok') d.canaryFailures += 1;
      }
      if (rk === ALL_ROUTES) {
        const b = bucketIndex(LATENCY_HISTOGRAM, e.latencyMs);
        d.hist.set(b, (d.hist.get(b) ?? 0) + 1);
      }
      out.set(key, d);
    }
  }
  return out;
}

function summarise(deltas: readonly RollupDelta[]): Map<string, Partial<RollupDelta>> {
  const out = new Map<string, Partial<RollupDelta> & { hist: Map<number, number> }>();
  for (const d of deltas) {
    const hist = new Map<number, number>();
    d.latencyHist?.forEach((n, i) => n > 0 && hist.set(i, n));
    out.set(`${d.site} ${d.bucket} ${d.routeKey}`, {
      ...Object.fromEntries(COUNTED.map((f) => [f, d[f]])),
      requests: d.requests,
      hist,
    });
  }
  return out;
}

test('minute, hour and day deltas equal the per-event definition, and come sorted by key', () => {
  fc.assert(
    fc.property(fc.array(classifiedArb, { maxLength: 200 }), (events) => {
      const agg = new BatchAggregator();
      for (const { event, classification } of events) agg.add(event, classification);
      const rollups = agg.rollups();
      for (const level of ['minute', 'hour', 'day'] as const) {
        expect(summarise(rollups[level])).toEqual(direct(events, level));
        const keys = rollups[level].map((d) => [d.site, d.bucket, d.routeKey] as const);
        const sorted = [...keys].sort((a, b) =>
          a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0),
        );
        expect(keys).toEqual(sorted);
      }
    }),
    { numRuns: runs(300) },
  );
});

test('with a first minute day, older events make no minute deltas; hour and day deltas stay the definition', () => {
  // T0 is 22:00 on day 0; the batch spans days 0–2, and minute rows are kept from day 1 on.
  const minuteFrom = bucketStart('day', T0) + DAY;
  fc.assert(
    fc.property(fc.array(classifiedArb, { maxLength: 200 }), (events) => {
      const agg = new BatchAggregator({ minuteFrom });
      for (const { event, classification } of events) agg.add(event, classification);
      const rollups = agg.rollups();
      expect(summarise(rollups.minute)).toEqual(
        direct(
          events.filter((e) => e.event.ts >= minuteFrom),
          'minute',
        ),
      );
      for (const level of ['hour', 'day'] as const) {
        expect(summarise(rollups[level])).toEqual(direct(events, level));
        const keys = rollups[level].map((d) => [d.site, d.bucket, d.routeKey] as const);
        const sorted = [...keys].sort((a, b) =>
          a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0),
        );
        expect(keys).toEqual(sorted);
      }
    }),
    { numRuns: runs(300) },
  );
});
