/**
 * Which incident `review <site> --incident T` is about, from the site's band changes alone (pure).
 *
 * The anchor is the change into `degrading` or `resisting` nearest T within [T − before, T + after]; or,
 * when none falls there but the band in force at T is one of those, T itself (the incident began before
 * the bound). The window runs from the first move away from calm before the anchor (the change after
 * the last calm band) to the first return to calm after it; each end is cut at its bound when the band
 * never was calm there, and said so (`openStart`, `openEnd`). Calm = `healthy` or `learning`: a loop
 * that starts learns, then turns healthy, and neither is an incident. `stopped` is not calm: a person's
 * stop during the incident is part of it.
 */
import type { HealthBand } from '../../core/common/names';

/** A change of the band the loop published (control_audit), oldest first. */
export interface BandMove {
  at: number;
  from: HealthBand | null;
  to: HealthBand;
}

export interface IncidentWindow {
  /** The change the incident is anchored on (or T when the band was already bad at T). */
  anchor: number;
  from: number;
  to: number;
  /** The band never was calm between the bound and the anchor: `from` is the bound. */
  openStart: boolean;
  /** The band did not return to calm before the bound (or now): `to` is the bound. */
  openEnd: boolean;
  /** The most urgent band of the window: stopped > resisting > degrading. */
  worst: HealthBand;
}

const WARNING: ReadonlySet<HealthBand> = new Set(['degrading', 'resisting']);
const CALM: ReadonlySet<HealthBand> = new Set(['healthy', 'learning']);
const URGENCY: readonly HealthBand[] = ['stopped', 'resisting', 'degrading', 'learning', 'healthy'];

export const isWarning = (b: HealthBand): boolean => WARNING.has(b);
export const isCalm = (b: HealthBand | null): boolean => b === null || CALM.has(b);

/** The band in force at `t` (after every move at or before it), starting from `before`. */
export function bandAt(moves: readonly BandMove[], before: HealthBand | null, t: number): HealthBand | null {
  let band = before;
  for (const m of moves) if (m.at <= t) band = m.to;
  return band;
}

/**
 * The incident around `t`, or null when there is none: `moves` are the changes of [t − beforeMs,
 * min(t + afterMs, now)], `bandBefore` the band in force just before that range.
 */
export function findIncident(
  moves: readonly BandMove[],
  bandBefore: HealthBand | null,
  t: number,
  beforeMs: number,
  afterMs: number,
  now: number,
): IncidentWindow | null {
  const lower = t - beforeMs;
  const upper = Math.min(t + afterMs, now);
  const inRange = moves.filter((m) => m.at >= lower && m.at <= upper).sort((a, b) => a.at - b.at);
  const into = inRange.filter((m) => WARNING.has(m.to) && !WARNING.has(m.from ?? 'healthy'));
  let anchor: number;
  if (into.length > 0) {
    // Nearest to T; on a tie the earlier one (the incident that T falls at the end of was first).
    anchor = into.reduce((best, m) => (Math.abs(m.at - t) < Math.abs(best.at - t) ? m : best)).at;
  } else {
    const atT = bandAt(inRange, bandBefore, Math.min(t, upper));
    if (atT === null || !WARNING.has(atT)) return null;
    anchor = Math.min(t, upper);
  }

  // Back from the anchor to the latest move that left calm (a move from no band counts: the loop's first).
  const left = inRange.filter((m) => m.at <= anchor && isCalm(m.from) && !isCalm(m.to)).pop();
  const from = left?.at ?? lower;
  const openStart = left === undefined;

  // Forward from the anchor to the first return to calm.
  const back = inRange.find((m) => m.at > anchor && isCalm(m.to));
  const to = back?.at ?? upper;
  const openEnd = back === undefined;

  const bands = new Set<HealthBand>();
  const startBand = bandAt(inRange, bandBefore, from);
  if (startBand !== null) bands.add(startBand);
  for (const m of inRange) if (m.at >= from && m.at < to) bands.add(m.to);
  const worst = URGENCY.find((b) => bands.has(b) && !CALM.has(b)) ?? 'degrading';
  return { anchor, from, to, openStart, openEnd, worst };
}
