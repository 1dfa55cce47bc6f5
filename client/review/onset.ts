/**
 * The seed's first review question — did the score move early enough? — answered from the incident's onset (pure).
 *
 * **Onset**: the first minute the site's traffic left its normal, in the stretch that leads into the first warning.
 * A minute is out of normal when, over the PEAK_WINDOW_MS ending with it (at least MIN_REQUESTS requests), the share
 * refused (hard blocks + challenges + soft blocks, all routes) is ONSET_REFUSAL_EXCESS or more above the normal
 * share, or the median of its minutes' p95 latency is ONSET_LATENCY_FACTOR × the normal p95 or more. Normal is the
 * loop's own baseline: the 14 whole days ending the day before (the day rollups, as the chart draws it). From the
 * first warning (or the window's start) the onset walks back over out-of-normal minutes as long as no more than
 * ONSET_GAP_MS separates two of them (a lull or minutes with too few requests do not end the stretch), at most
 * ONSET_LOOKBACK_MS: a tarpit's two hours of slowness before its refusals belong to the incident; a blip hours
 * earlier does not.
 *
 * Against the onset and against the minute refusals passed half (first 5-minute share over 50 %, the truth `simulate`
 * records), the review puts: the first tick with a sign (a reason the incident ends up with), the first tick with
 * the evidence (all of them), the first degrade and the first pause. The incident's reasons are the health signals
 * (hard_block, challenge, soft_block, latency) of the tick that moved the band to its worst; a refusal rule's key
 * is a verdict, not evidence. A pause more than PAUSE_DUE_MS after refusals passed half is late: the refusal rules
 * promise an abrupt wall pauses within about five minutes.
 */
import { HEALTH_SIGNALS } from '../../core/scoring/reasons';
import type { DayBaseline, RateBucket } from '../../tools/charts/types';
import type { ControlChange } from '../../server/db/history';
import type { IncidentWindow } from './find-incident';
import type { BandChangeRow, Early } from './schema';
import { MIN_REQUESTS, PEAK_WINDOW_MS, trailingRates } from './refusals';

const MINUTE = 60_000;
export const ONSET_REFUSAL_EXCESS = 0.05;
export const ONSET_LATENCY_FACTOR = 1.5;
export const ONSET_GAP_MS = 10 * MINUTE;
export const ONSET_LOOKBACK_MS = 6 * 3_600_000;
export const REFUSED_HALF = 0.5;
export const PAUSE_DUE_MS = 5 * MINUTE;

export interface Normal {
  /** Share refused, 0–1; null without baseline traffic. */
  refusalShare: number | null;
  p95LatencyMs: number | null;
}

export type OnsetSignal = 'refusals' | 'latency' | 'refusals and latency';

export interface Onset {
  at: number;
  /** What was out of normal in the onset's minute. */
  signal: OnsetSignal;
}

/** The normal of the day `t` falls in, from the chart's daily baselines. */
export function normalAt(baselines: readonly DayBaseline[], t: number): Normal {
  const day = baselines.filter((b) => b.day <= t).pop();
  if (day === undefined) return { refusalShare: null, p95LatencyMs: null };
  const parts = [day.hardBlockRate, day.challengeRate, day.softBlockRate];
  return {
    refusalShare: parts.every((p) => p === null) ? null : parts.reduce<number>((n, p) => n + (p ?? 0), 0),
    p95LatencyMs: day.p95LatencyMs,
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Per bucket of [from, to): what was out of normal over the trailing window ending with it (null: nothing). */
export function outOfNormal(
  buckets: readonly RateBucket[],
  from: number,
  to: number,
  bucketMs: number,
  normal: Normal,
): { t: number; signal: OnsetSignal | null }[] {
  const sorted = [...buckets].sort((a, b) => a.t - b.t);
  const rates = trailingRates(sorted, from, to, bucketMs);
  return rates.map(({ t, rate }) => {
    const refused = rate !== null && rate >= (normal.refusalShare ?? 0) + ONSET_REFUSAL_EXCESS;
    let slow = false;
    if (normal.p95LatencyMs !== null && normal.p95LatencyMs > 0) {
      const span = sorted.filter((b) => b.t > t + bucketMs - PEAK_WINDOW_MS - 1 && b.t <= t);
      const p95s = span.filter((b) => b.requests > 0 && b.p95LatencyMs !== null).map((b) => b.p95LatencyMs!);
      const requests = span.reduce((n, b) => n + b.requests, 0);
      slow = requests >= MIN_REQUESTS && p95s.length > 0 && median(p95s) >= ONSET_LATENCY_FACTOR * normal.p95LatencyMs;
    }
    const signal: OnsetSignal | null =
      refused && slow ? 'refusals and latency' : refused ? 'refusals' : slow ? 'latency' : null;
    return { t, signal };
  });
}

/**
 * The onset of the incident whose first warning (or start) is `ref`, the window ending at `to`: see the module
 * comment. Null when no minute in [ref − ONSET_LOOKBACK_MS, to) was out of normal near `ref`.
 */
export function findOnset(
  buckets: readonly RateBucket[],
  ref: number,
  to: number,
  bucketMs: number,
  normal: Normal,
): Onset | null {
  const marks = outOfNormal(buckets, ref - ONSET_LOOKBACK_MS, to, bucketMs, normal).filter(
    (m): m is { t: number; signal: OnsetSignal } => m.signal !== null,
  );
  // The stretch that holds `ref`: the last out-of-normal minute at or before it (within the gap), else the first after.
  let i = -1;
  for (const [k, m] of marks.entries()) if (m.t <= ref) i = k;
  if (i < 0 || ref - marks[i]!.t > ONSET_GAP_MS) i = marks.findIndex((m) => m.t > ref);
  if (i < 0) return null;
  while (i > 0 && marks[i]!.t - marks[i - 1]!.t <= ONSET_GAP_MS) i -= 1;
  const first = marks[i]!;
  if (first.signal === 'refusals' || normal.p95LatencyMs === null) return { at: first.t, signal: first.signal };
  // The median of five minutes turns two to three minutes late: back to the first of the slow minutes behind it.
  const threshold = ONSET_LATENCY_FACTOR * normal.p95LatencyMs;
  const behind = buckets.filter((b) => b.t > first.t - PEAK_WINDOW_MS && b.t < first.t).sort((a, b) => b.t - a.t);
  let at = first.t;
  for (const b of behind) {
    if (b.p95LatencyMs === null || b.p95LatencyMs < threshold) break;
    at = b.t;
  }
  return { at, signal: first.signal };
}

/** The first minute in [from, to) whose trailing refusal share passed half, or null. */
export function refusedHalfAt(
  buckets: readonly RateBucket[],
  from: number,
  to: number,
  bucketMs: number,
): number | null {
  return trailingRates(buckets, from, to, bucketMs).find((r) => r.rate !== null && r.rate > REFUSED_HALF)?.t ?? null;
}

/** The health signals among a tick's reasons (a refusal rule's key is a verdict, not evidence). */
export const signalReasons = (reasons: readonly string[]): string[] =>
  reasons.filter((r) => (HEALTH_SIGNALS as readonly string[]).includes(r));

export interface TickReasons {
  at: number;
  reasons: readonly string[];
}

/**
 * The first tick at or after `from` naming any of `wanted` (a sign) and the first naming all of them (the evidence);
 * null when none did, or nothing is wanted.
 */
export function firstEvidence(
  ticks: readonly TickReasons[],
  wanted: readonly string[],
  from: number,
): { sign: number | null; evidence: number | null } {
  if (wanted.length === 0) return { sign: null, evidence: null };
  const after = [...ticks].sort((a, b) => a.at - b.at).filter((t) => t.at >= from);
  return {
    sign: after.find((t) => wanted.some((w) => t.reasons.includes(w)))?.at ?? null,
    evidence: after.find((t) => wanted.every((w) => t.reasons.includes(w)))?.at ?? null,
  };
}

/** A moment of the incident against its onset and the minute refusals passed half (positive: after it). */
export interface Milestone {
  at: string;
  afterOnsetMs: number | null;
  afterHalfMs: number | null;
}

export function milestone(at: number | null, onset: number | null, half: number | null): Milestone | null {
  if (at === null) return null;
  return {
    at: new Date(at).toISOString(),
    afterOnsetMs: onset === null ? null : at - onset,
    afterHalfMs: half === null ? null : at - half,
  };
}

/** A pause is late when it came more than PAUSE_DUE_MS after refusals passed half. */
export const pauseLate = (pause: Milestone | null): boolean =>
  pause !== null && pause.afterHalfMs !== null && pause.afterHalfMs > PAUSE_DUE_MS;

/**
 * Did the score move early enough (from what gatherFacts read): the onset from the rollups and the site's
 * normal, then the first sign, the evidence, the first degrade and the first pause against it (client/review/onset.ts).
 */
export function earlyFacts(o: {
  window: IncidentWindow;
  buckets: readonly RateBucket[];
  bucketMs: number;
  baselines: Parameters<typeof normalAt>[0];
  timeline: readonly BandChangeRow[];
  changes: readonly ControlChange[];
  ticks: readonly { at: number; reasons: readonly string[] }[];
}): Early {
  const { window } = o;
  const warning = o.timeline.find((b) => b.to === 'degrading' || b.to === 'resisting');
  const ref = warning === undefined ? window.from : Date.parse(warning.at);
  const normal = normalAt(o.baselines, ref);
  const onset = findOnset(o.buckets, ref, window.to, o.bucketMs, normal);
  const start = onset?.at ?? window.from;
  const half = refusedHalfAt(o.buckets, start, window.to, o.bucketMs);
  // What the incident ends up with: the health signals of the tick that moved the band to its worst.
  const decisive =
    o.timeline.find((b) => b.to === window.worst && signalReasons(b.reasons).length > 0) ??
    [...o.timeline].reverse().find((b) => signalReasons(b.reasons).length > 0);
  const reasons = decisive === undefined ? [] : signalReasons(decisive.reasons);
  const found = firstEvidence(o.ticks, reasons, start);
  const pause = o.changes.find((c) => c.newControls.paused && c.oldControls?.paused !== true);
  const at = (t: number | null) => milestone(t, onset?.at ?? null, half);
  const firstPause = at(pause === undefined ? null : pause.at.getTime());
  return {
    onset: onset === null ? null : { at: new Date(onset.at).toISOString(), signal: onset.signal },
    normal,
    refusedHalfAt: half === null ? null : new Date(half).toISOString(),
    reasons,
    firstSign: at(found.sign),
    firstEvidence: at(found.evidence),
    firstDegrade: at(warning === undefined ? null : Date.parse(warning.at)),
    firstPause,
    pauseLate: pauseLate(firstPause),
  };
}
