/**
 * How `tune` scores one setting against the labels (pure): each labelled incident and each quiet day replayed
 * under it (client/review/replay-span.ts), read here into a scorecard, and two scorecards compared
 * lexicographically — fewer missed pauses (and missed warnings of incidents marked right), then fewer false pauses,
 * then more lead time, then less flapping, then less time throttled while the site was healthy. Definitions in
 * docs/tuning.md, "The objective".
 */
import type { ActionPolicy } from '../../core/control/controls';
import type { ReplayTick } from '../../tools/replay/types';
import { throttledTick } from '../review/tune-figures';
import type { Incident } from './labels';

/** A pause the loop made itself (a person's pause keeps the band; the loop's is resisting, awaiting a person). */
export const loopPaused = (t: ReplayTick): boolean => t.band === 'resisting' && t.awaitingSince !== null;
const warning = (t: ReplayTick): boolean => t.band === 'degrading' || t.band === 'resisting';

export interface Scorecard {
  /** Right or late pauses the setting did not make in time; incidents marked right it did not warn on. */
  missed: number;
  /** Pauses in incidents labelled false, or on quiet days. */
  falsePauses: number;
  /** Summed over the pauses it had to make: how long before the reference (the person's pause, the live pause). */
  leadMs: number;
  /** Entries into degrading or resisting beyond the first of each incident, and every one on a quiet day. */
  flaps: number;
  /** Time throttled where the labels say the site was healthy: quiet days, false pauses and false alarms. */
  throttledHealthyMs: number;
}

export const EMPTY: Scorecard = { missed: 0, falsePauses: 0, leadMs: 0, flaps: 0, throttledHealthyMs: 0 };

export function add(a: Scorecard, b: Scorecard): Scorecard {
  return {
    missed: a.missed + b.missed,
    falsePauses: a.falsePauses + b.falsePauses,
    leadMs: a.leadMs + b.leadMs,
    flaps: a.flaps + b.flaps,
    throttledHealthyMs: a.throttledHealthyMs + b.throttledHealthyMs,
  };
}

/** Negative when `a` is better: the components in order, the first that differs decides. */
export function compare(a: Scorecard, b: Scorecard): number {
  return (
    a.missed - b.missed ||
    a.falsePauses - b.falsePauses ||
    b.leadMs - a.leadMs ||
    a.flaps - b.flaps ||
    a.throttledHealthyMs - b.throttledHealthyMs
  );
}

/** Entries into a warning band from a calm one, within [from, to). */
function entries(ticks: readonly ReplayTick[], from: number, to: number): number {
  let n = 0;
  let before = false;
  for (const t of ticks) {
    const at = Date.parse(t.asOf);
    const now = warning(t);
    if (at >= from && at < to && now && !before) n += 1;
    before = now;
  }
  return n;
}

const within = (ticks: readonly ReplayTick[], from: number, to: number): ReplayTick[] =>
  ticks.filter((t) => {
    const at = Date.parse(t.asOf);
    return at >= from && at < to;
  });

/** What one setting's replay of a labelled incident says: its part of the scorecard and its outcome in words. */
export interface IncidentOutcome {
  card: Scorecard;
  /** `paused 10:04Z`, `no pause`, `warned 10:02Z`, `no warning`. */
  outcome: string;
  /** The outcome the label wants. */
  right: boolean;
}

const hhmm = (ms: number): string => `${new Date(ms).toISOString().slice(11, 16)}Z`;

/**
 * One labelled incident under one setting: `ticks` are the replay's (its warm-up included), `tickMs` their tick.
 * Pauses and warnings count from the incident's start less `lookbackMs` (a setting that acts earlier acts before
 * the live loop left calm), up to the time the label is judged at.
 */
export function scoreIncident(
  i: Incident,
  ticks: readonly ReplayTick[],
  tickMs: number,
  policy: ActionPolicy,
  lookbackMs: number,
): IncidentOutcome {
  const from = i.from - lookbackMs;
  const upTo = within(ticks, from, i.judgedAt + 1);
  const pause = upTo.find(loopPaused);
  const warn = upTo.find(warning);
  const card = { ...EMPTY };
  const healthyMs = (to: number): number =>
    within(ticks, from, to).filter((t) => throttledTick(t, policy)).length * tickMs;
  switch (i.label) {
    case 'false-pause': {
      if (pause !== undefined) card.falsePauses = 1;
      card.flaps = Math.max(0, entries(ticks, from, i.to) - 1);
      card.throttledHealthyMs = healthyMs(i.to);
      return {
        card,
        outcome: pause === undefined ? 'no pause' : `paused ${hhmm(Date.parse(pause.asOf))}`,
        right: pause === undefined,
      };
    }
    case 'right-pause':
    case 'late-pause': {
      if (pause === undefined) card.missed = 1;
      else card.leadMs = i.judgedAt - Date.parse(pause.asOf);
      card.flaps = Math.max(0, entries(ticks, from, i.to) - 1);
      return {
        card,
        outcome: pause === undefined ? `no pause by ${hhmm(i.judgedAt)}` : `paused ${hhmm(Date.parse(pause.asOf))}`,
        right: pause !== undefined,
      };
    }
    case 'false-alarm': {
      const any = within(ticks, from, i.to);
      const paused = any.find(loopPaused);
      if (paused !== undefined) card.falsePauses = 1;
      card.flaps = Math.max(0, entries(ticks, from, i.to) - 1);
      card.throttledHealthyMs = healthyMs(i.to);
      const w = any.find(warning);
      return {
        card,
        outcome: w === undefined ? 'no warning' : `warned ${hhmm(Date.parse(w.asOf))}`,
        right: w === undefined,
      };
    }
    case 'right-warning': {
      if (warn === undefined) card.missed = 1;
      else card.leadMs = i.judgedAt - Date.parse(warn.asOf);
      return {
        card,
        outcome: warn === undefined ? 'no warning' : `warned ${hhmm(Date.parse(warn.asOf))}`,
        right: warn !== undefined,
      };
    }
    case null:
      return { card, outcome: 'unlabelled', right: true };
  }
}

/** A quiet day under one setting: every pause is false, every entry into a warning a flap, throttling unneeded. */
export function scoreQuiet(
  ticks: readonly ReplayTick[],
  day: { from: number; to: number },
  tickMs: number,
  policy: ActionPolicy,
): Scorecard {
  const inDay = within(ticks, day.from, day.to);
  let pauses = 0;
  let before = false;
  for (const t of ticks) {
    const at = Date.parse(t.asOf);
    const now = loopPaused(t);
    if (at >= day.from && at < day.to && now && !before) pauses += 1;
    before = now;
  }
  return {
    missed: 0,
    falsePauses: pauses,
    leadMs: 0,
    flaps: entries(ticks, day.from, day.to),
    throttledHealthyMs: inDay.filter((t) => throttledTick(t, policy)).length * tickMs,
  };
}
