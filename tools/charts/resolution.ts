/**
 * How finely a period is plotted, and from which rollup: the smallest bucket that keeps the chart under
 * MAX_POINTS points per series. A bucket under an hour reads minute rollups, under a day hour rollups,
 * else day rollups — so six hours show minutes, two weeks hours, a year days, and a read never sums
 * more rows than it plots times the bucket's width in rollup rows.
 */
import type { Resolution } from './types';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Enough to see a one-bucket spike on a 1,200-pixel-wide chart; few enough to render in well under a second. */
export const MAX_POINTS = 400;

const STEPS: readonly Resolution[] = [
  { level: 'minute', bucketMs: MINUTE },
  { level: 'minute', bucketMs: 5 * MINUTE },
  { level: 'minute', bucketMs: 15 * MINUTE },
  { level: 'hour', bucketMs: HOUR },
  { level: 'hour', bucketMs: 3 * HOUR },
  { level: 'hour', bucketMs: 6 * HOUR },
  { level: 'day', bucketMs: DAY },
  { level: 'day', bucketMs: 7 * DAY },
];

export function chooseResolution(fromMs: number, toMs: number): Resolution {
  const span = toMs - fromMs;
  return STEPS.find((s) => span / s.bucketMs <= MAX_POINTS) ?? STEPS[STEPS.length - 1]!;
}

/**
 * Minute rollups are kept only a few days (docs/signal-store.md, Retention): when the period has hour
 * rows from before the oldest minute row (`minutesPruned`), it is read from hour rollups, at hourly
 * buckets at least — a site whose traffic merely starts inside the period keeps its minutes.
 */
export function withinMinuteRetention(r: Resolution, minutesPruned: boolean): Resolution {
  if (r.level !== 'minute' || !minutesPruned) return r;
  return { level: 'hour', bucketMs: Math.max(r.bucketMs, HOUR) };
}

/** `15 min`, `1 h`, `1 day`: how a bucket is named in the chart's title and the command's line. */
export function describeBucket(ms: number): string {
  if (ms % DAY === 0) return ms === DAY ? '1 day' : `${ms / DAY} days`;
  if (ms % HOUR === 0) return `${ms / HOUR} h`;
  return `${ms / MINUTE} min`;
}

export const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;
