/**
 * "What to tune" in one sentence (pure). Like with like: every figure compared comes from replays over the same
 * ticks with the same warm-up and decisions, and "earlier" is first warning against first warning. A candidate is
 * recommended only when it was a comparison (both replays had settled: client/review/settle.ts), did better on the
 * incident — warned earlier, or throttled less without warning later — and added no false degrade or pause over
 * the quiet days; better on the incident with false alarms added is said as a trade-off, and without quiet days
 * checked it is not recommended either.
 */
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import type { CandidateFigures, Headline, QuietDays, RunFigures } from './schema';
import { warnedEarlier } from './tune-figures';

const fromOnset = (ms: number | null): string | null =>
  ms === null
    ? null
    : ms === 0
      ? 'at the onset'
      : ms > 0
        ? `${formatDuration(ms)} after the onset`
        : `${formatDuration(-ms)} before the onset`;

/** Warned no later than the current settings (or neither warned). */
function noLater(current: RunFigures, c: CandidateFigures): boolean {
  if (c.firstDegradeAt === null) return current.firstDegradeAt === null;
  return current.firstDegradeAt === null || (c.earlierByMs ?? 0) >= 0;
}

export const betterOnIncident = (current: RunFigures, c: CandidateFigures): boolean =>
  c.noComparison === null && (warnedEarlier(current, c) || (noLater(current, c) && c.throttledLess > 0));

/** `warned 1 min earlier (4 min after the onset instead of 5 min after it)`, or the throttling it saved. */
function gain(current: RunFigures, c: CandidateFigures): string {
  if (!warnedEarlier(current, c)) return `throttled ${plural(c.throttledLess, 'tick')} fewer and warned no later`;
  if (current.firstDegradeAt === null) return 'warned where the current settings never did';
  const a = fromOnset(c.warnAfterOnsetMs);
  const b = fromOnset(current.warnAfterOnsetMs);
  return `warned ${formatDuration(c.earlierByMs!)} earlier${a === null || b === null ? '' : ` (${a} instead of ${b})`}`;
}

function alarms(c: CandidateFigures): string {
  const q = c.quiet!;
  const parts = [
    q.addedDegrades > 0 ? plural(q.addedDegrades, 'false degrade') : null,
    q.addedPauses > 0 ? plural(q.addedPauses, 'false pause') : null,
  ].filter((x): x is string => x !== null);
  return parts.join(' and ');
}

const addsNoAlarm = (c: CandidateFigures): boolean =>
  c.quiet !== null && c.quiet.addedDegrades <= 0 && c.quiet.addedPauses <= 0;

/** Earliest warning first, then the fewest throttled ticks. */
function best(current: RunFigures, cs: readonly CandidateFigures[]): CandidateFigures {
  const key = (c: CandidateFigures): number => (warnedEarlier(current, c) ? Date.parse(c.firstDegradeAt!) : Infinity);
  return cs.reduce((a, b) => (key(b) < key(a) || (key(b) === key(a) && b.throttledLess > a.throttledLess) ? b : a));
}

export function headline(current: RunFigures, candidates: readonly CandidateFigures[], quiet: QuietDays): Headline {
  if (candidates.length > 0 && candidates.every((c) => c.noComparison !== null))
    return { kind: 'no-comparison', candidate: null, text: `${candidates[0]!.noComparison!}.` };
  const better = candidates.filter((c) => betterOnIncident(current, c));
  if (better.length === 0)
    return {
      kind: 'none',
      candidate: null,
      text: 'none of the candidates did better on the incident than the current settings: keep them.',
    };
  const days = plural(quiet.days.length, 'quiet day');
  if (quiet.days.length === 0) {
    const c = best(current, better);
    return {
      kind: 'unchecked',
      candidate: c.name,
      text:
        `${c.name} ${gain(current, c)}, but it was not checked against quiet days ` +
        `(${quiet.shortfall ?? 'none replayed'}): no recommendation without them.`,
    };
  }
  const clean = better.filter(addsNoAlarm);
  if (clean.length > 0) {
    const c = best(current, clean);
    return {
      kind: 'recommend',
      candidate: c.name,
      text: `try ${c.name}: it ${gain(current, c)} and added no false alarm over ${days} (${quietList(quiet)}).`,
    };
  }
  const c = best(current, better);
  return {
    kind: 'trade-off',
    candidate: c.name,
    text:
      `${c.name} ${gain(current, c)}, but it would have added ${alarms(c)} over ${days} (${quietList(quiet)}): ` +
      'a trade-off to weigh, not a recommendation.',
  };
}

const quietList = (q: QuietDays): string => q.days.map((d) => d.day).join(', ');
