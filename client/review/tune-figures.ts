/**
 * "What to tune", the pure part: the settings tried beside the site's current ones, and the figures a
 * review reads from each replay — when it first warned (degrading) and paused from the incident's start on, its
 * lead before refusals peaked, how many ticks it throttled (the backtest's measure: degrading, resisting, paused
 * or controls below nominal), where it differs from the current settings' replay (`replay --compare`), whether the
 * two are a comparison at all (client/review/settle.ts), and what it adds over the quiet days.
 */
import { type ActionPolicy, isThrottled } from '../../core/control/controls';
import type { SiteHealthConfig } from '../../core/control/config';
import { formatDuration } from '../../core/common/durations';
import { compareReplays } from '../../tools/replay/format';
import type { ReplayResult, ReplayTick } from '../../tools/replay/types';
import type { CandidateFigures, QuietFigures, RunFigures } from './schema';
import { settleMs, settling, unsettledText } from './settle';
import { when } from './words';

export interface Candidate {
  name: string;
  description: string;
  config: SiteHealthConfig;
}

/** Raising the healthy threshold by this much makes the loop degrade (and throttle) sooner. */
export const EARLIER_THROTTLE_POINTS = 5;

/**
 * The two settings a review tries when none are given: the smoothing half-life halved (the smoothed
 * score follows a fall sooner), and the healthy threshold raised (the loop degrades at a higher score).
 */
export function builtInCandidates(current: SiteHealthConfig): Candidate[] {
  const out: Candidate[] = [];
  const half = current.scoring.smoothing.halfLifeMs;
  out.push({
    name: 'faster smoothing',
    description:
      `smoothing half-life ${formatDuration(half / 2)} (current ${formatDuration(half)}): {"scoring": {"smoothing": ` +
      `{"halfLifeMs": ${half / 2}}}}`,
    config: { ...current, scoring: { ...current.scoring, smoothing: { halfLifeMs: half / 2 } } },
  });
  const healthyMin = current.scoring.bands.healthyMin;
  if (healthyMin + EARLIER_THROTTLE_POINTS <= 100) {
    out.push({
      name: 'earlier throttle',
      description:
        `degrade below ${healthyMin + EARLIER_THROTTLE_POINTS} instead of ${healthyMin}: {"scoring": {"bands": ` +
        `{"healthyMin": ${healthyMin + EARLIER_THROTTLE_POINTS}}}}`,
      config: {
        ...current,
        scoring: {
          ...current.scoring,
          bands: { ...current.scoring.bands, healthyMin: healthyMin + EARLIER_THROTTLE_POINTS },
        },
      },
    });
  }
  return out;
}

export function throttledTick(t: ReplayResult['ticks'][number], policy: ActionPolicy): boolean {
  return (
    t.band === 'degrading' ||
    t.band === 'resisting' ||
    t.controls?.paused === true ||
    (t.controls !== null && isThrottled(t.controls, policy))
  );
}

/**
 * Where a review measures a run's milestones from (epoch ms): the incident's start (its onset, else the window's
 * start), the onset itself, and when refusals peaked in the store.
 */
export interface Marks {
  incidentFrom: number;
  onsetAt: number | null;
  peakReachedAt: number | null;
}

const since = (at: string | null, from: number | null): number | null =>
  at === null || from === null ? null : Date.parse(at) - from;

const warningBand = (t: ReplayTick): boolean => t.band === 'degrading' || t.band === 'resisting';
const pausedTick = (t: ReplayTick): boolean => t.awaitingSince !== null && t.band === 'resisting';

/**
 * The incident's first tick that is `what` (a run already so at the incident's start: that start's tick). A warning
 * before the traffic left normal is a false alarm, not an early warning: the quiet days count those.
 */
function firstFrom(r: ReplayResult, from: number, what: (t: ReplayTick) => boolean): string | null {
  return r.ticks.find((t) => Date.parse(t.asOf) >= from && what(t))?.asOf ?? null;
}

/** One replay's figures: its first warning and pause from the incident's start on. */
export function runFigures(
  name: string,
  description: string,
  r: ReplayResult,
  policy: ActionPolicy,
  marks: Marks,
): RunFigures {
  const first = firstFrom(r, marks.incidentFrom, warningBand);
  const pause = firstFrom(r, marks.incidentFrom, pausedTick);
  return {
    name,
    description,
    firstDegradeAt: first,
    firstPauseAt: pause,
    leadMs: first === null || marks.peakReachedAt === null ? null : marks.peakReachedAt - Date.parse(first),
    warnAfterOnsetMs: since(first, marks.onsetAt),
    pauseAfterOnsetMs: since(pause, marks.onsetAt),
    throttledTicks: r.ticks.filter((t) => throttledTick(t, policy)).length,
    warningTicks: r.ticks.filter(warningBand).length,
    notices: Object.values(r.summary.notices).reduce((n, k) => n + (k ?? 0), 0),
  };
}

/** A run as a comparison reads it: its ticks, figures, and smoothing half-life. */
export interface Run {
  result: ReplayResult;
  figures: RunFigures;
  halfLifeMs: number;
}

/** Where the incident starts for settling (its onset, else the window's start), and its name in words. */
export interface IncidentStart {
  at: number;
  what: string;
}

/**
 * Why the two runs are no comparison, or null (client/review/settle.ts). Both must have settled where the
 * comparison reads them, the incident's start; and runs that already differed before both had settled (in band,
 * reasons, controls or notices) must agree again once they have (same band, same controls), or what follows may be
 * their cold start's doing.
 */
export function noComparison(
  current: Run,
  candidate: Run,
  start: IncidentStart,
  firstDifferenceAt: number | null,
): string | null {
  let settledAt = -Infinity;
  for (const [run, label] of [
    [current, "the current settings' replay"],
    [candidate, `the ${candidate.figures.name} replay`],
  ] as const) {
    const s = settling(run.result.ticks, run.halfLifeMs, start.at, run.result.summary.tickMs);
    if (!s.settled) return unsettledText(s, run.halfLifeMs, start.what, label);
    settledAt = Math.max(settledAt, s.coldStartAt! + settleMs(run.halfLifeMs));
  }
  if (firstDifferenceAt === null || firstDifferenceAt >= settledAt) return null;
  const at = (r: ReplayResult): ReplayTick | undefined => r.ticks.find((t) => Date.parse(t.asOf) >= settledAt);
  const a = at(current.result);
  const b = at(candidate.result);
  if (
    a !== undefined &&
    b !== undefined &&
    a.band === b.band &&
    JSON.stringify(a.controls) === JSON.stringify(b.controls)
  )
    return null;
  return (
    `no comparison: the two replays already differed at ${when(new Date(firstDifferenceAt).toISOString())}, ` +
    `before both had settled (${when(new Date(settledAt).toISOString())}), and still did then`
  );
}

const important = (fields: readonly string[]): boolean => fields.some((f) => f !== 'score' && f !== 'smoothedScore');

/** A candidate's figures against the current settings' replay (over the same ticks), and over the quiet days. */
export function candidateFigures(
  current: Run,
  candidate: Run,
  start: IncidentStart,
  quiet: { current: QuietFigures; candidate: QuietFigures } | null = null,
): CandidateFigures {
  const diff = compareReplays(current.result, candidate.result);
  const a = current.figures.firstDegradeAt;
  const b = candidate.figures.firstDegradeAt;
  const firstImportant = diff.differences.find((d) => important(d.fields));
  return {
    ...candidate.figures,
    differences: diff.differences.length,
    importantDifferences: diff.differences.filter((d) => important(d.fields)).length,
    earlierByMs: a === null || b === null ? null : Date.parse(a) - Date.parse(b),
    throttledLess: current.figures.throttledTicks - candidate.figures.throttledTicks,
    noComparison: noComparison(
      current,
      candidate,
      start,
      firstImportant === undefined ? null : Date.parse(firstImportant.asOf),
    ),
    quiet:
      quiet === null
        ? null
        : {
            ...quiet.candidate,
            addedDegrades: quiet.candidate.degrades - quiet.current.degrades,
            addedPauses: quiet.candidate.pauses - quiet.current.pauses,
          },
  };
}

/** The candidate warned, and before the current settings (or they never did). */
export const warnedEarlier = (current: RunFigures, c: CandidateFigures): boolean =>
  c.firstDegradeAt !== null && (current.firstDegradeAt === null || (c.earlierByMs ?? 0) > 0);

/** The candidate that warned earliest (before the current settings, or where they never warned), of the comparable. */
export function warnedEarliest(current: RunFigures, candidates: readonly CandidateFigures[]): string | null {
  const better = candidates.filter((c) => c.noComparison === null && warnedEarlier(current, c));
  if (better.length === 0) return null;
  return better.reduce((best, c) => (Date.parse(c.firstDegradeAt!) < Date.parse(best.firstDegradeAt!) ? c : best)).name;
}

/** The candidate that throttled fewest ticks, when fewer than the current settings (comparable ones only). */
export function throttledLeast(candidates: readonly CandidateFigures[]): string | null {
  const better = candidates.filter((c) => c.noComparison === null && c.throttledLess > 0);
  if (better.length === 0) return null;
  return better.reduce((best, c) => (c.throttledLess > best.throttledLess ? c : best)).name;
}
