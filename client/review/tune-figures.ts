/**
 * "What to tune", the pure part: the settings tried beside the site's current ones, and the figures a
 * review reads from each replay — when it first warned (degrading) and paused, its lead before refusals
 * peaked, how many ticks it throttled (the backtest's measure: degrading, resisting, paused or controls
 * below nominal), and where it differs from the current settings' replay (`replay --compare`).
 */
import { type ActionPolicy, isThrottled } from '../../core/control/controls';
import type { SiteHealthConfig } from '../../core/control/config';
import { formatDuration } from '../../core/common/durations';
import { compareReplays } from '../../tools/replay/format';
import type { ReplayResult } from '../../tools/replay/types';
import type { CandidateFigures, RunFigures } from './schema';

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

function throttledTick(t: ReplayResult['ticks'][number], policy: ActionPolicy): boolean {
  return (
    t.band === 'degrading' ||
    t.band === 'resisting' ||
    t.controls?.paused === true ||
    (t.controls !== null && isThrottled(t.controls, policy))
  );
}

/** One replay's figures; `peakReachedAt` (epoch ms) is when refusals peaked in the store, or null. */
export function runFigures(
  name: string,
  description: string,
  r: ReplayResult,
  policy: ActionPolicy,
  peakReachedAt: number | null,
): RunFigures {
  const first = r.summary.firstDegradeAt;
  return {
    name,
    description,
    firstDegradeAt: first,
    firstPauseAt: r.summary.firstPauseAt,
    leadMs: first === null || peakReachedAt === null ? null : peakReachedAt - Date.parse(first),
    throttledTicks: r.ticks.filter((t) => throttledTick(t, policy)).length,
    warningTicks: r.ticks.filter((t) => t.band === 'degrading' || t.band === 'resisting').length,
    notices: Object.values(r.summary.notices).reduce((n, k) => n + (k ?? 0), 0),
  };
}

/** A candidate's figures against the current settings' replay. */
export function candidateFigures(
  current: { result: ReplayResult; figures: RunFigures },
  candidate: { result: ReplayResult; figures: RunFigures },
): CandidateFigures {
  const diff = compareReplays(current.result, candidate.result);
  const a = current.figures.firstDegradeAt;
  const b = candidate.figures.firstDegradeAt;
  return {
    ...candidate.figures,
    differences: diff.differences.length,
    importantDifferences: diff.differences.filter((d) => d.fields.some((f) => f !== 'score' && f !== 'smoothedScore'))
      .length,
    earlierByMs: a === null || b === null ? null : Date.parse(a) - Date.parse(b),
    throttledLess: current.figures.throttledTicks - candidate.figures.throttledTicks,
  };
}

/** The candidate that warned earliest (before the current settings, or where they never warned), if any. */
export function warnedEarliest(current: RunFigures, candidates: readonly CandidateFigures[]): string | null {
  const better = candidates.filter(
    (c) => c.firstDegradeAt !== null && (current.firstDegradeAt === null || (c.earlierByMs ?? 0) > 0),
  );
  if (better.length === 0) return null;
  return better.reduce((best, c) => (Date.parse(c.firstDegradeAt!) < Date.parse(best.firstDegradeAt!) ? c : best)).name;
}

/** The candidate that throttled fewest ticks, when fewer than the current settings. */
export function throttledLeast(candidates: readonly CandidateFigures[]): string | null {
  const better = candidates.filter((c) => c.throttledLess > 0);
  if (better.length === 0) return null;
  return better.reduce((best, c) => (c.throttledLess > best.throttledLess ? c : best)).name;
}
