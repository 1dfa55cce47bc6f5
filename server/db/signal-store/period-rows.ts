/**
 * A period's minute rollups of one site, read in one statement and checked once: the replay's boundary
 * (tools/replay/engine.ts). What the per-tick statement (read-windows.ts) validates on every window —
 * counts non-negative integers, labels short, sums exact — is checked here for the whole period, so the
 * windows summed from these rows (period-windows.ts) need no further parsing.
 *
 * The rows come back as arrays (rowMode 'array') with the fewest fields a window needs: route rows carry their
 * bucket, key and one `{…}` text of the five counts a route window holds; the all-routes row also the other
 * nine, its credits and its latency histogram. The texts are read by readCountArray (array-literal.ts):
 * as separate fields, 20,000 rows cost several times more to parse. The labels come once per route, from a
 * second statement run alongside.
 *
 * A period the check refuses (a bucket that is not a whole minute, a negative or non-integer count, a NULL
 * histogram bucket, a label past MAX_LABEL_CHARS, a route whose labels change, sums past the exact integers,
 * credits that are not finite and non-negative) is not an error: the replay then reads each window with the
 * per-tick statement, which judges such data as the live loop does.
 */
import { z } from 'zod';
import { MAX_LABEL_CHARS } from '../../../core/scoring/window';
import type { Pool } from '../pool';
import { ALL_ROUTES } from './aggregate';
import { readCountArray } from './array-literal';

/** A route window's counts, in each row's order. */
export const ROUTE_COUNTS = ['requests', 'hard_blocks', 'challenges', 'soft_blocks', 'errors'] as const;
/** The all-routes row's other counts, after ROUTE_COUNTS. */
export const TOTAL_COUNTS = [
  'extraction_ok',
  'extraction_missing',
  'extraction_schema',
  'extraction_empty',
  'valid_records',
  'retries',
  'bytes',
  'canary_runs',
  'canary_failures',
] as const;

export interface PeriodRoute {
  key: string;
  country: string | null;
  pool: string | null;
  session: string | null;
}

/** The period's rows in flat arrays, in (minute, route key) order. */
export interface PeriodRows {
  length: number;
  /** Each row's minute, epoch ms (ascending). */
  t: Float64Array;
  /** Each row's route, an index into `routes`. */
  route: Int32Array;
  /** ROUTE_COUNTS.length counts per row. */
  counts: Float64Array;
  /** TOTAL_COUNTS.length counts per row (zeros on route rows). */
  totals: Float64Array;
  /** Credits per row (0 on route rows: a window's credits are its all-routes rows'). */
  credits: Float64Array;
  /** The all-routes rows' latency histograms (null elsewhere, and where the row has none). */
  hist: Array<number[] | null>;
  /** The longest histogram. */
  histLength: number;
  routes: PeriodRoute[];
  /** The all-routes route's index in `routes`, -1 when the period has none. */
  all: number;
}

/** The rows as the statement sends them (rowMode 'array'). */
export type RawPeriodRow = [
  /** The bucket, epoch seconds. */
  t: number,
  routeKey: string,
  /** `{…}`: ROUTE_COUNTS, and TOTAL_COUNTS after them on the all-routes row. */
  counts: string,
  credits: number | null,
  latencyHist: string | null,
];

/** The period's routes and their labels, from a statement of their own (one row per key and labels). */
export type RawPeriodLabels = [routeKey: string, country: string | null, pool: string | null, session: string | null];

/** Above this a period's sums could leave the exact integers: such a period is read per tick. */
const SAFE_TOTAL = Number.MAX_SAFE_INTEGER / 2;

/**
 * $1 site, $2–$3 the period, $4 the all-routes key. The labels come from LABELS_SQL once per route instead of
 * on every row: node-postgres's cost is per field (a third of the read's went to them). The bucket as epoch
 * seconds in a double (`date_part`: a third of the statement's time went to `extract`'s numeric arithmetic):
 * exact for the whole minutes ingest writes; a bucket that is not one is refused (parsePeriodRows), so no
 * rounding ever moves a row.
 */
const PERIOD_SQL = `
SELECT date_part('epoch', bucket) AS t, route_key,
       CASE WHEN route_key = $4
            THEN ARRAY[requests, hard_blocks, challenges, soft_blocks, errors, extraction_ok, extraction_missing,
                       extraction_schema, extraction_empty, valid_records, retries, bytes, canary_runs,
                       canary_failures]
            ELSE ARRAY[requests, hard_blocks, challenges, soft_blocks, errors] END::text AS counts,
       CASE WHEN route_key = $4 THEN credits END AS credits,
       CASE WHEN route_key = $4 THEN latency_hist::text END AS latency_hist
  FROM rollup_minute WHERE site = $1 AND bucket >= $2 AND bucket < $3
 ORDER BY bucket, route_key`;

/** Each route's labels in the period: a route whose labels change comes twice (and the period is refused). */
const LABELS_SQL = `
SELECT route_key, country, pool, session
  FROM rollup_minute WHERE site = $1 AND bucket >= $2 AND bucket < $3
 GROUP BY route_key, country, pool, session`;

const labelSchema = z.string().max(MAX_LABEL_CHARS).nullable();

/** What the whole period must satisfy to be summed in memory (see the header). */
const periodCheck = z.object({
  countsRead: z.literal(true, {
    error: 'a bucket is not a whole minute, or a count or histogram not an array of non-negative integers',
  }),
  routes: z.array(
    z.object({
      key: z.string(),
      country: labelSchema,
      pool: labelSchema,
      session: labelSchema,
    }),
  ),
  labelsKnown: z.literal(true, { error: "a route's labels change within the period, or were not read" }),
  largestSum: z.number().max(SAFE_TOTAL),
  credits: z.number().min(0),
  smallestCredits: z.number().min(0),
});

/** Parses and checks the statements' rows; null when the period is refused (see the header). */
export function parsePeriodRows(labels: readonly RawPeriodLabels[], raw: readonly RawPeriodRow[]): PeriodRows | null {
  const labelsOf = new Map<string, RawPeriodLabels>();
  let labelsKnown = true;
  for (const l of labels) {
    if (labelsOf.has(l[0])) labelsKnown = false;
    labelsOf.set(l[0], l);
  }
  const n = raw.length;
  const t = new Float64Array(n);
  const route = new Int32Array(n);
  const counts = new Float64Array(n * ROUTE_COUNTS.length);
  const totals = new Float64Array(n * TOTAL_COUNTS.length);
  const credits = new Float64Array(n);
  const hist: Array<number[] | null> = new Array<number[] | null>(n).fill(null);
  const sums = new Float64Array(ROUTE_COUNTS.length + TOTAL_COUNTS.length);
  const routes: PeriodRoute[] = [];
  const index = new Map<string, number>();
  const parsed: number[] = [];
  let countsRead = true;
  let histLength = 0;
  let histSum = 0;
  let creditSum = 0;
  let smallestCredits = 0;
  for (let i = 0; i < n && countsRead && labelsKnown; i++) {
    const [time, key, countText, credit, histText] = raw[i]!;
    let r = index.get(key);
    if (r === undefined) {
      const l = labelsOf.get(key);
      if (l === undefined) labelsKnown = false;
      r = routes.length;
      index.set(key, r);
      routes.push({ key, country: l?.[1] ?? null, pool: l?.[2] ?? null, session: l?.[3] ?? null });
    }
    const isAll = key === ALL_ROUTES;
    parsed.length = 0;
    const width = isAll ? ROUTE_COUNTS.length + TOTAL_COUNTS.length : ROUTE_COUNTS.length;
    if (readCountArray(countText, parsed) !== width) countsRead = false;
    // A bucket is a whole minute (ingest floors it): anything else is refused, so seconds × 1000 is exact.
    if (time % 60 !== 0) countsRead = false;
    t[i] = time * 1000;
    route[i] = r;
    for (let k = 0; k < ROUTE_COUNTS.length; k++) counts[i * ROUTE_COUNTS.length + k] = parsed[k]!;
    if (!isAll) continue;
    for (let k = 0; k < width; k++) sums[k]! += parsed[k]!;
    for (let k = 0; k < TOTAL_COUNTS.length; k++)
      totals[i * TOTAL_COUNTS.length + k] = parsed[ROUTE_COUNTS.length + k]!;
    credits[i] = credit ?? 0;
    creditSum += credits[i]!;
    smallestCredits = Math.min(smallestCredits, credits[i]!);
    if (histText !== null) {
      const h: number[] = [];
      if (readCountArray(histText, h) < 0) countsRead = false;
      for (let k = 0; k < h.length; k++) histSum += h[k]!;
      histLength = Math.max(histLength, h.length);
      hist[i] = h;
    }
  }
  // Route rows are summed per route, each at most the period's sum over all rows: bounded by the same check.
  let routeSum = 0;
  for (let i = 0; i < counts.length; i++) routeSum += counts[i]!;
  const checked = periodCheck.safeParse({
    countsRead,
    routes,
    labelsKnown,
    largestSum: Math.max(routeSum, histSum, ...sums),
    // NaN and ±Infinity fail z.number().
    credits: creditSum,
    smallestCredits,
  });
  if (!checked.success) return null;
  return { length: n, t, route, counts, totals, credits, hist, histLength, routes, all: index.get(ALL_ROUTES) ?? -1 };
}

/** The minute rollups of `site` in [from, to), read and checked once (null: refused, read per tick). */
export async function readPeriodRows(pool: Pool, site: string, from: Date, to: Date): Promise<PeriodRows | null> {
  // Side by side on two connections; a route ingested between the two reads has no labels: refused, read per tick.
  const [labels, rows] = await Promise.all([
    pool.query<RawPeriodLabels>({ text: LABELS_SQL, values: [site, from, to], rowMode: 'array' }),
    pool.query<RawPeriodRow>({ text: PERIOD_SQL, values: [site, from, to, ALL_ROUTES], rowMode: 'array' }),
  ]);
  return parsePeriodRows(labels.rows, rows.rows);
}
