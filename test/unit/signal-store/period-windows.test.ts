/**
 * The replay's running-sum windows (server/db/signal-store/period-windows.ts) against each window summed afresh
 * from the same rows and converted by the per-tick statement's own conversion (read-windows.ts `windowOf`,
 * `recentOf`): equal, key order included, whatever the order the windows are asked in — sliding forward, a gate
 * moving the start, jumps back and forth. And what the period check (period-rows.ts) refuses. The statement
 * itself is compared in test/integration/period-windows.test.ts.
 */
import fc from 'fast-check';
import { parseWindow } from '../../../core/scoring/window';
import { ALL_ROUTES } from '../../../server/db/signal-store/aggregate';
import { numberArray } from '../../../server/db/signal-store/array-literal';
import {
  type RawPeriodLabels,
  type RawPeriodRow,
  ROUTE_COUNTS,
  TOTAL_COUNTS,
  parsePeriodRows,
} from '../../../server/db/signal-store/period-rows';
import { periodWindows } from '../../../server/db/signal-store/period-windows';
import { type WindowRow, recentOf, windowOf } from '../../../server/db/signal-store/read-windows';
import { runs } from '../../kit/sizes';

const M = 60_000;
const T0 = Date.UTC(2026, 10, 24, 6);

interface Route {
  key: string;
  country: string | null;
  pool: string | null;
  session: string | null;
}

/** Routes as ingest keys them (`country|pool|session`), with an empty label and an unlabelled one among them. */
const ROUTES: Route[] = [
  { key: 'BR|dc-3|rotating', country: 'BR', pool: 'dc-3', session: 'rotating' },
  { key: 'US|dc-1|sticky', country: 'US', pool: 'dc-1', session: 'sticky' },
  { key: 'US|res-2|', country: 'US', pool: 'res-2', session: '' },
  { key: '||', country: null, pool: null, session: null },
  { key: 'other', country: '(other)', pool: '(other)', session: '(other)' },
];
const ALL: Route = { key: ALL_ROUTES, country: null, pool: null, session: null };

interface Row {
  minute: number;
  route: Route;
  counts: number[];
  credits: number;
  hist: number[] | null;
}

const count = fc.integer({ min: 0, max: 40 });
const rowArb = (minutes: number) =>
  fc.record({
    minute: fc.integer({ min: 0, max: minutes - 1 }),
    route: fc.constantFrom(ALL, ALL, ...ROUTES),
    counts: fc.array(count, { minLength: 14, maxLength: 14 }),
    // Fractions whose sums round: the order they are added in shows.
    credits: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 5_000 }).map((n) => n / 10),
    ),
    hist: fc.option(fc.array(count, { maxLength: 12 }), { nil: null }),
  });

/** One row per minute and route, in the statement's order (minute, then route key in code-unit order). */
function ordered(rows: readonly Row[]): Row[] {
  const seen = new Map<string, Row>();
  for (const r of rows) seen.set(`${r.minute}/${r.route.key}`, r);
  return [...seen.values()].sort((a, b) =>
    a.minute !== b.minute ? a.minute - b.minute : a.route.key < b.route.key ? -1 : a.route.key > b.route.key ? 1 : 0,
  );
}

function raw(rows: readonly Row[]): RawPeriodRow[] {
  return rows.map((r) => {
    const all = r.route === ALL;
    return [
      (T0 + r.minute * M) / 1000,
      r.route.key,
      numberArray(all ? r.counts : r.counts.slice(0, 5)),
      all ? r.credits : null,
      all && r.hist !== null ? numberArray(r.hist) : null,
    ];
  });
}

/** The labels statement's rows: each route's labels once. */
function labels(rows: readonly Row[]): RawPeriodLabels[] {
  const routes = new Map(rows.map((r) => [r.route.key, r.route]));
  return [...routes.values()].map((r) => [r.key, r.country, r.pool, r.session]);
}

/** The window summed afresh, as WindowRows, converted as the statement's rows are. */
function reference(rows: readonly Row[], from: number, to: number, recentFrom: number) {
  const names = [...ROUTE_COUNTS, ...TOTAL_COUNTS];
  const byRoute = new Map<
    string,
    { route: Route; sums: number[]; recent: number[]; credits: number; hist: number[] | null }
  >();
  for (const r of rows) {
    const t = T0 + r.minute * M;
    if (t < from || t >= to) continue;
    const all = r.route === ALL;
    let acc = byRoute.get(r.route.key);
    if (acc === undefined) {
      acc = { route: r.route, sums: new Array<number>(14).fill(0), recent: [0, 0, 0, 0, 0], credits: 0, hist: null };
      byRoute.set(r.route.key, acc);
    }
    const counts = all ? r.counts : [...r.counts.slice(0, 5), ...new Array<number>(9).fill(0)];
    counts.forEach((n, k) => (acc.sums[k]! += n));
    if (t >= recentFrom) for (let k = 0; k < 5; k++) acc.recent[k]! += counts[k]!;
    if (all) acc.credits += r.credits;
    if (all && r.hist !== null) {
      const h = (acc.hist ??= []);
      r.hist.forEach((x, k) => (h[k] = (h[k] ?? 0) + x));
    }
  }
  const out: WindowRow[] = [...byRoute.values()].map((acc) => {
    const row = {
      route_key: acc.route.key,
      country: acc.route.country,
      pool: acc.route.pool,
      session: acc.route.session,
      credits: acc.credits,
      latency_hist: acc.hist === null ? null : acc.hist.map(String),
      recent_requests: String(acc.recent[0]),
      recent_hard_blocks: String(acc.recent[1]),
      recent_challenges: String(acc.recent[2]),
      recent_soft_blocks: String(acc.recent[3]),
      recent_errors: String(acc.recent[4]),
    } as WindowRow;
    names.forEach((c, k) => (row[c] = String(acc.sums[k])));
    return row;
  });
  return { ...windowOf(out), recent: recentOf(out) };
}

/** Window bounds as a replay asks them: [from, to) with the recent window's start, in minutes from T0. */
const askArb = (minutes: number) =>
  fc.record({
    to: fc.integer({ min: 0, max: minutes }),
    length: fc.integer({ min: 0, max: 20 }),
    recent: fc.integer({ min: 0, max: 8 }),
  });

test('every window from running sums equals the window summed afresh, in any order of asking', () => {
  const minutes = 60;
  fc.assert(
    fc.property(
      fc.array(rowArb(minutes), { maxLength: 200, size: 'large' }),
      // A replay's ticks (sliding by a minute, a gate now and then), then windows asked in any order.
      fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40, size: 'large' }),
      fc.array(askArb(minutes), { maxLength: 25, size: 'large' }),
      (generated, gates, asks) => {
        const rows = ordered(generated);
        const parsed = parsePeriodRows(labels(rows), raw(rows));
        expect(parsed).not.toBeNull();
        const windows = periodWindows(parsed!, T0, T0 + minutes * M);
        const sequence = [
          ...gates.map((gate, i) => ({ to: 15 + i, length: gate === 0 ? 5 + ((i * 7) % 11) : 15, recent: 5 })),
          ...asks,
        ];
        for (const ask of sequence) {
          const to = T0 + Math.min(ask.to, minutes) * M;
          const from = Math.max(T0, to - ask.length * M);
          const recentFrom = Math.max(from, to - ask.recent * M);
          const memory = windows.current({ from: new Date(from), to: new Date(to) }, new Date(recentFrom));
          const fresh = reference(rows, from, to, recentFrom);
          expect(memory).toEqual(fresh);
          // Key order too (JSON of the assessments compares it), and a window makeWindow would return as it is.
          expect(JSON.stringify(memory)).toBe(JSON.stringify(fresh));
          expect(JSON.stringify(parseWindow(memory))).toBe(JSON.stringify(memory));
        }
      },
    ),
    { numRuns: runs(100) },
  );
});

test('outside the period read there is no answer', () => {
  const rows = [{ minute: 1, route: ALL, counts: new Array<number>(14).fill(1), credits: 0, hist: null }];
  const parsed = parsePeriodRows(labels(rows), raw(rows));
  const windows = periodWindows(parsed!, T0, T0 + 10 * M);
  expect(windows.current({ from: new Date(T0 - M), to: new Date(T0 + 5 * M) }, new Date(T0))).toBeNull();
  expect(windows.current({ from: new Date(T0), to: new Date(T0 + 11 * M) }, new Date(T0))).toBeNull();
  expect(windows.current({ from: new Date(T0), to: new Date(T0 + 10 * M) }, new Date(T0))?.requests).toBe(1);
});

describe('the period check refuses what a window must not hold (the replay then reads per tick)', () => {
  const sticky: RawPeriodLabels = ['US|dc-1|sticky', 'US', 'dc-1', 'sticky'];
  const goodLabels = (): RawPeriodLabels[] => [[ALL_ROUTES, null, null, null], [...sticky]];
  const good = (): RawPeriodRow[] => [
    [T0 / 1000, ALL_ROUTES, numberArray(new Array<number>(14).fill(2)), 1.5, '{0,3,1}'],
    [T0 / 1000, sticky[0], '{2,0,1,0,0}', null, null],
    [(T0 + M) / 1000, sticky[0], '{1,1,0,0,0}', null, null],
  ];
  const edit = (at: number, field: number, value: string | number | null): [RawPeriodLabels[], RawPeriodRow[]] => {
    const rows = good();
    (rows[at] as unknown[])[field] = value;
    return [goodLabels(), rows];
  };
  const relabel = (session: string): [RawPeriodLabels[], RawPeriodRow[]] => [
    [
      [ALL_ROUTES, null, null, null],
      [sticky[0], 'US', 'dc-1', session],
    ],
    good(),
  ];

  test('good rows pass, and so does a label of 256 characters', () => {
    expect(parsePeriodRows(goodLabels(), good())).not.toBeNull();
    expect(parsePeriodRows([], [])).not.toBeNull();
    expect(parsePeriodRows(...relabel('x'.repeat(256)))).not.toBeNull();
  });
  test.each([
    ['a bucket that is not a whole minute', edit(2, 0, (T0 + M) / 1000 + 30)],
    ['a bucket that is not a whole second', edit(2, 0, (T0 + M) / 1000 + 0.5)],
    ['a negative count', edit(1, 2, '{2,-1,1,0,0}')],
    ['a count array of the wrong length', edit(2, 2, '{1,1,0,0}')],
    ['a NULL histogram bucket', edit(0, 4, '{0,NULL,1}')],
    ['a fractional count', edit(1, 2, '{2,0.5,1,0,0}')],
    ['a label past 256 characters', relabel('x'.repeat(257))],
    [
      'labels that change within the period',
      [[...goodLabels(), [sticky[0], 'US', 'dc-9', 'sticky']], good()] as [RawPeriodLabels[], RawPeriodRow[]],
    ],
    [
      'a route without labels (ingested between the two reads)',
      [[goodLabels()[0]!], good()] as [RawPeriodLabels[], RawPeriodRow[]],
    ],
    ['sums past the exact integers', edit(1, 2, `{${2 ** 52},0,0,0,0}`)],
    ['credits that are not a number', edit(0, 3, Number.NaN)],
    ['infinite credits', edit(0, 3, Number.POSITIVE_INFINITY)],
    ['negative credits', edit(0, 3, -0.5)],
  ])('%s', (_what, [l, rows]) => {
    expect(parsePeriodRows(l, rows)).toBeNull();
  });
});
