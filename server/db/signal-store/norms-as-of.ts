/**
 * Size and records norms "as of" a day (docs/classification.md, "Norms as of the event's day").
 *
 * - **The days before, never the day itself.** An event of UTC day D is classified against the norms of
 *   D−14 … D−1. What a day holds never depends on when or in what order its traffic was stored, so a
 *   backfill in one call, a replay and a live feed of the same traffic classify the same; and a day's
 *   own traffic — hostility included — cannot judge itself.
 * - **The typical day, not the pooled sum.** Each day with enough samples has its own median size and
 *   records rate; the norm is the upper median of those daily values. Hostility the classifier failed
 *   to see (tiny pages or empty extractions stored as `ok`) only pulls a day's values down, so it
 *   becomes the norm only if it filled most of the window's days — an incident day at six times the
 *   usual volume is one day among fourteen, not six. With an even number of days the upper of the two
 *   middle values is taken, for the same reason.
 * - A sparse page type whose days are each too thin to vote is judged on the window pooled, as before;
 *   the classifier still asks for its minimum number of samples.
 *
 * Pure: ingest.ts loads the window's rows (norms.ts) and adds the rows of earlier days of its own batch.
 */
import type { Norms } from '@target-health/crawler/events/classify';
import { BYTES_HISTOGRAM, mergeInto, quantile } from '../../../core/signals/histogram';

/** How many days before the event's own day make its norms. */
export const NORM_DAYS = 14;
export const DAY_MS = 86_400_000;
/**
 * A day votes with its own median size or records rate only with at least this many samples (the
 * classifier's default minimum): a day of three responses says little about what is usual.
 */
export const MIN_DAY_SAMPLES = 20;

/** One (page type, UTC day) of `page_norms_day`: the 2xx responses classified `ok` that day. */
export interface DayNorm {
  /** UTC day start, epoch ms. */
  day: number;
  /** Responses that reported their size (the histogram's count). */
  responses: number;
  /** Responses with an extraction that yielded at least one valid record. */
  withRecords: number;
  /** Responses with an extraction. */
  extractions: number;
  bytesHist: readonly number[] | null;
}

/** The days whose rows make the norms of `day` (a UTC day start): `[from, to)`, i.e. D−14 … D−1. */
export function normWindow(day: number): { from: number; to: number } {
  return { from: day - NORM_DAYS * DAY_MS, to: day };
}

/**
 * The norms, per page type, for classifying events of `day`, from per-day rows. Rows outside the window
 * are ignored; several rows of one page type and day (the stored row and a batch's own delta) add up.
 */
export function normsAsOf(rows: ReadonlyMap<string, readonly DayNorm[]>, day: number): Map<string, Norms> {
  const { from, to } = normWindow(day);
  const out = new Map<string, Norms>();
  for (const [pageType, list] of rows) {
    const days = mergeDays(list, from, to);
    if (days.length === 0) continue;
    const norms: Norms = {};
    const size = sizeNorm(days);
    if (size) norms.sizeNorm = size;
    const records = recordsNorm(days);
    if (records) norms.recordsNorm = records;
    if (norms.sizeNorm || norms.recordsNorm) out.set(pageType, norms);
  }
  return out;
}

interface MergedDay {
  responses: number;
  withRecords: number;
  extractions: number;
  hist: number[] | null;
}

function mergeDays(list: readonly DayNorm[], from: number, to: number): MergedDay[] {
  const byDay = new Map<number, MergedDay>();
  for (const r of list) {
    if (r.day < from || r.day >= to) continue;
    let d = byDay.get(r.day);
    if (!d) byDay.set(r.day, (d = { responses: 0, withRecords: 0, extractions: 0, hist: null }));
    d.responses += r.responses;
    d.withRecords += r.withRecords;
    d.extractions += r.extractions;
    if (r.bytesHist) d.hist = mergeInto(d.hist ?? [], r.bytesHist);
  }
  return [...byDay.values()];
}

/** The upper median: the middle value, or the larger of the two middle ones. */
export function upperMedian(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function sizeNorm(days: readonly MergedDay[]): Norms['sizeNorm'] {
  const voting = days.filter((d) => d.hist !== null && d.responses >= MIN_DAY_SAMPLES);
  if (voting.length > 0) {
    const medians = voting
      .map((d) => quantile(BYTES_HISTOGRAM, d.hist!, 0.5))
      .filter((m): m is number => m !== undefined);
    const median = upperMedian(medians);
    if (median === undefined) return undefined;
    return { medianBytes: median, samples: voting.reduce((n, d) => n + d.responses, 0) };
  }
  const pooled: number[] = [];
  let samples = 0;
  for (const d of days) {
    if (d.hist === null || d.responses === 0) continue;
    mergeInto(pooled, d.hist);
    samples += d.responses;
  }
  const median = samples > 0 ? quantile(BYTES_HISTOGRAM, pooled, 0.5) : undefined;
  return median === undefined ? undefined : { medianBytes: median, samples };
}

function recordsNorm(days: readonly MergedDay[]): Norms['recordsNorm'] {
  const voting = days.filter((d) => d.extractions >= MIN_DAY_SAMPLES);
  if (voting.length > 0) {
    const rate = upperMedian(voting.map((d) => d.withRecords / d.extractions))!;
    return { usualRecordsRate: rate, samples: voting.reduce((n, d) => n + d.extractions, 0) };
  }
  let withRecords = 0;
  let extractions = 0;
  for (const d of days) {
    withRecords += d.withRecords;
    extractions += d.extractions;
  }
  return extractions > 0 ? { usualRecordsRate: withRecords / extractions, samples: extractions } : undefined;
}
