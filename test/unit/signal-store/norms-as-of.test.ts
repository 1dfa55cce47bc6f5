/**
 * Norms "as of" a day (server/db/signal-store/norms-as-of.ts): events of UTC day D are judged against the days
 * D−14 … D−1 only, and against the typical day of them (upper median of the daily values), so neither
 * the day itself nor a large hostile day the classifier missed becomes the norm.
 */
import fc from 'fast-check';
import {
  DAY_MS,
  MIN_DAY_SAMPLES,
  NORM_DAYS,
  normWindow,
  normsAsOf,
  upperMedian,
  type DayNorm,
} from '../../../server/db/signal-store/norms-as-of';
import { BYTES_HISTOGRAM, bucketIndex, emptyHistogram } from '../../../core/signals/histogram';

const D = Date.UTC(2026, 10, 20);

/** A day of `n` responses of `bytes` each, `withRecords` of them with records. */
function day(offsetDays: number, n: number, bytes: number, withRecords = n): DayNorm {
  const hist = emptyHistogram(BYTES_HISTOGRAM);
  hist[bucketIndex(BYTES_HISTOGRAM, bytes)] = n;
  return { day: D + offsetDays * DAY_MS, responses: n, withRecords, extractions: n, bytesHist: hist };
}

const within = (value: number | undefined, expected: number) => {
  expect(value).toBeDefined();
  expect(Math.abs(value! / expected - 1)).toBeLessThanOrEqual(BYTES_HISTOGRAM.relativeError + 1e-9);
};

test('the window of day D is D−14 … D−1', () => {
  expect(NORM_DAYS).toBe(14);
  expect(normWindow(D)).toEqual({ from: D - 14 * DAY_MS, to: D });
});

test('only the 14 days before D count: D itself, later days and D−15 are ignored', () => {
  const rows = new Map([
    [
      'product',
      [
        day(-15, 500, 1_000),
        day(-14, 100, 50_000),
        day(-1, 100, 50_000),
        day(0, 10_000, 500, 0),
        day(3, 10_000, 500, 0),
      ],
    ],
  ]);
  const norms = normsAsOf(rows, D).get('product')!;
  within(norms.sizeNorm?.medianBytes, 50_000);
  expect(norms.sizeNorm?.samples).toBe(200);
  expect(norms.recordsNorm).toEqual({ usualRecordsRate: 1, samples: 200 });
  // Nothing before D: no norm at all (a new site's first day is judged on status and content only).
  expect(normsAsOf(new Map([['product', [day(0, 1_000, 50_000)]]]), D).size).toBe(0);
});

test('property: the norms of D depend only on the rows of D−14 … D−1', () => {
  const rowArb = fc.record({
    offset: fc.integer({ min: -20, max: 5 }),
    n: fc.integer({ min: 0, max: 200 }),
    bytes: fc.integer({ min: 1, max: 500_000 }),
    withRecordsShare: fc.double({ min: 0, max: 1, noNaN: true }),
    pageType: fc.constantFrom('product', 'listing'),
  });
  fc.assert(
    fc.property(fc.array(rowArb, { maxLength: 40 }), (raw) => {
      const all = new Map<string, DayNorm[]>();
      const inWindow = new Map<string, DayNorm[]>();
      for (const r of raw) {
        const row = day(r.offset, r.n, r.bytes, Math.floor(r.n * r.withRecordsShare));
        (all.get(r.pageType) ?? all.set(r.pageType, []).get(r.pageType)!).push(row);
        if (r.offset >= -14 && r.offset <= -1)
          (inWindow.get(r.pageType) ?? inWindow.set(r.pageType, []).get(r.pageType)!).push(row);
      }
      expect(normsAsOf(all, D)).toEqual(normsAsOf(inWindow, D));
    }),
  );
});

test('a hostile day the classifier missed does not become the norm, whatever its volume', () => {
  // 13 clean days (97 % with records, ~60 KB pages), then an incident day at 6× the volume where 65 % of
  // the "ok" answers were empty shells of 900 bytes.
  const clean = Array.from({ length: 13 }, (_, i) => day(-14 + i, 2_880, 60_000, 2_794));
  const incident = { ...day(-1, 17_280, 60_000, 6_048) };
  const hist = emptyHistogram(BYTES_HISTOGRAM);
  hist[bucketIndex(BYTES_HISTOGRAM, 60_000)] = 6_048;
  hist[bucketIndex(BYTES_HISTOGRAM, 900)] = 11_232;
  incident.bytesHist = hist;
  const norms = normsAsOf(new Map([['listing', [...clean, incident]]]), D).get('listing')!;
  // Pooled, the records rate would be (13 × 2,794 + 6,048) / (13 × 2,880 + 17,280) = 0.77: the rule off.
  expect(norms.recordsNorm!.usualRecordsRate).toBeCloseTo(2_794 / 2_880, 10);
  expect(norms.recordsNorm!.samples).toBe(13 * 2_880 + 17_280);
  within(norms.sizeNorm!.medianBytes, 60_000);
  // When most days of the window were like that, it is the norm: there is nothing else to go by.
  const mostly = Array.from({ length: 8 }, (_, i) => ({ ...incident, day: D - (i + 1) * DAY_MS }));
  const poisoned = normsAsOf(new Map([['listing', [...clean.slice(0, 6), ...mostly]]]), D).get('listing')!;
  expect(poisoned.recordsNorm!.usualRecordsRate).toBeCloseTo(6_048 / 17_280, 10);
});

test('the upper median: with an even number of days, the larger middle value', () => {
  expect(upperMedian([])).toBeUndefined();
  expect(upperMedian([3])).toBe(3);
  expect(upperMedian([0.74, 0.98])).toBe(0.98);
  expect(upperMedian([5, 1, 4, 2])).toBe(4);
  expect(upperMedian([5, 1, 3])).toBe(3);
  // A first day of empty listings (74 % with records), then a normal one: the norm is the normal day's.
  const rows = new Map([['listing', [day(-2, 400, 30_000, 296), day(-1, 400, 30_000, 392)]]]);
  expect(normsAsOf(rows, D).get('listing')!.recordsNorm).toEqual({ usualRecordsRate: 392 / 400, samples: 800 });
});

test('days too thin to vote are left out; a page type with only thin days is judged on its window pooled', () => {
  const thin = MIN_DAY_SAMPLES - 1;
  const mixed = normsAsOf(new Map([['product', [day(-3, 100, 40_000, 95), day(-2, thin, 2_000, 0)]]]), D).get(
    'product',
  )!;
  expect(mixed.recordsNorm).toEqual({ usualRecordsRate: 0.95, samples: 100 });
  within(mixed.sizeNorm!.medianBytes, 40_000);
  expect(mixed.sizeNorm!.samples).toBe(100);
  const sparse = normsAsOf(
    new Map([['product', Array.from({ length: 10 }, (_, i) => day(-1 - i, 3, 40_000, i < 9 ? 3 : 0))]]),
    D,
  ).get('product')!;
  expect(sparse.recordsNorm).toEqual({ usualRecordsRate: 27 / 30, samples: 30 });
  within(sparse.sizeNorm!.medianBytes, 40_000);
  expect(sparse.sizeNorm!.samples).toBe(30);
});

test("rows of one day add up (the stored row and a batch's own rows of that day)", () => {
  const stored = day(-1, 15, 50_000, 15);
  const pending = day(-1, 15, 50_000, 12);
  const norms = normsAsOf(new Map([['product', [stored, pending]]]), D).get('product')!;
  // 30 samples together: the day votes with 27 / 30.
  expect(norms.recordsNorm).toEqual({ usualRecordsRate: 0.9, samples: 30 });
  expect(norms.sizeNorm!.samples).toBe(30);
  // The inputs are not changed.
  expect(stored.bytesHist![bucketIndex(BYTES_HISTOGRAM, 50_000)]).toBe(15);
});

test('a day without sizes (no bytes sent) gives a records norm only', () => {
  const row: DayNorm = { day: D - DAY_MS, responses: 0, withRecords: 40, extractions: 40, bytesHist: null };
  expect(normsAsOf(new Map([['search', [row]]]), D).get('search')).toEqual({
    recordsNorm: { usualRecordsRate: 1, samples: 40 },
  });
});
