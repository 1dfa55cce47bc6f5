/**
 * People's decisions as labels for `target-health tune` (pure): what each incident of a site's record says the
 * loop should have done, read from who did what and when (docs/tuning.md, "Labels").
 *
 * - **false pause**: the loop paused, and a person resumed it within RESUME_SOON_MS with the site serving normally
 *   again after the resume (its refused share back within the normal's band) — the pause protected nothing a
 *   throttle would not have. A person's mark `false-alarm` on an incident the loop paused says the same.
 * - **right pause**: the loop paused, and a person stopped the site; or resumed it later than RESUME_SOON_MS (the
 *   pause held until the site recovered); or resumed it while the site still refused (the person took the risk, the
 *   pause was not wrong); or marked it `right`.
 * - **late pause**: a person paused the site by hand while the loop was `healthy`, `learning` or `degrading`: the
 *   loop should have paused by then.
 * - **false alarm**: a person marked an incident the loop only degraded on `false-alarm`: its throttling was time
 *   throttled while healthy.
 * - **right warning**: a person marked an incident the loop only degraded on `right`: a setting that no longer
 *   warns there misses it.
 * - An incident nobody decided on or marked is **unlabelled**: listed, not scored.
 * - A `configure` within SETTINGS_AFTER_MS after an incident's end is noted on it (the settings were judged wrong
 *   then); it moves no score: the replays already try other settings.
 * A person's mark outranks what their decisions imply (the latest mark of an incident counts).
 */
import type { HealthBand } from '../../core/common/names';
import { isCalm, type BandMove } from '../review/find-incident';

const MINUTE = 60_000;
/** A resume this soon after the loop's pause, into normal traffic, says the pause was wrong. */
export const RESUME_SOON_MS = 30 * MINUTE;
/** A configure this soon after an incident's end is noted on it. */
export const SETTINGS_AFTER_MS = 24 * 60 * MINUTE;
/** A person's pause while the band was calm counts the loop's pauses from this long before it. */
export const LATE_LOOKBACK_MS = 60 * MINUTE;

export type LabelKind = 'false-pause' | 'right-pause' | 'late-pause' | 'false-alarm' | 'right-warning';
export type MarkVerdict = 'right' | 'false_alarm';

/** A change of the published band, with who made it: the loop (`control-loop`) or a person (`human:<who>`). */
export interface LabelMove extends BandMove {
  byLoop: boolean;
  /** The controls after it were paused. */
  paused: boolean;
}

export interface LabelDecision {
  at: number;
  kind: 'resume' | 'stop' | 'pause';
  who: string;
  why: string;
  /** Resumes only: whether the site served normally over the minutes after it (null: too little traffic to say). */
  servedNormallyAfter: boolean | null;
}

export interface LabelMark {
  incidentAt: number;
  verdict: MarkVerdict;
  who: string;
  why: string;
  markedAt: number;
}

export interface LabelSettingsChange {
  at: number;
  who: string;
  why: string | null;
}

export interface LabelInput {
  moves: readonly LabelMove[];
  /** The band in force before the first move. */
  bandBefore: HealthBand | null;
  decisions: readonly LabelDecision[];
  marks: readonly LabelMark[];
  settingsChanges: readonly LabelSettingsChange[];
  /** The end of the record (now, or --to). */
  end: number;
}

export interface Incident {
  /** Left calm (or the person's pause minus LATE_LOOKBACK_MS for a pause with no incident under way). */
  from: number;
  /** Back to calm (or `end` when it never was). */
  to: number;
  /** The loop's own first pause in it, or null. */
  loopPausedAt: number | null;
  label: LabelKind | null;
  /**
   * The time the label is judged against: the resume (false pause: no pause before it), the person's pause (late
   * pause: the loop pauses by then), the loop's pause (right pause), the incident's end otherwise.
   */
  judgedAt: number;
  /** Why the label, in words: the decisions or the mark it comes from. */
  because: string;
  /** `configure of … by …` after the incident, or null. */
  settingsChangedAfter: string | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const mins = (ms: number): string => `${Math.round(ms / MINUTE)} min`;

/** The incidents of the record: from leaving calm to the first return to calm (review's windows, all of them). */
function windows(moves: readonly LabelMove[], before: HealthBand | null, end: number): Incident[] {
  const out: Incident[] = [];
  let band = before;
  let open: Incident | null = isCalm(before) ? null : blank(moves[0]?.at ?? end, end);
  for (const m of moves) {
    if (open === null && isCalm(band) && !isCalm(m.to)) open = blank(m.at, end);
    if (open !== null && m.byLoop && m.paused && open.loopPausedAt === null) open.loopPausedAt = m.at;
    if (open !== null && isCalm(m.to)) {
      open.to = m.at;
      out.push(open);
      open = null;
    }
    band = m.to;
  }
  if (open !== null) out.push(open);
  return out;
}

function blank(from: number, end: number): Incident {
  return { from, to: end, loopPausedAt: null, label: null, judgedAt: end, because: '', settingsChangedAfter: null };
}

const inside = (i: Incident, t: number): boolean => t >= i.from && t <= i.to;

/** What the people's decisions say of an incident the loop paused. */
function fromDecisions(i: Incident, decisions: readonly LabelDecision[]): void {
  if (i.loopPausedAt === null) return;
  const after = decisions.filter((d) => d.at >= i.loopPausedAt! && d.at <= i.to && d.kind !== 'pause');
  const d = after[0];
  if (d === undefined) return;
  const waited = d.at - i.loopPausedAt;
  if (d.kind === 'stop') {
    Object.assign(i, {
      label: 'right-pause',
      judgedAt: i.loopPausedAt,
      because: `stopped by ${d.who} at ${iso(d.at)} (${d.why})`,
    });
  } else if (waited <= RESUME_SOON_MS && d.servedNormallyAfter === true) {
    Object.assign(i, {
      label: 'false-pause',
      judgedAt: d.at,
      because:
        `resumed by ${d.who} ${mins(waited)} after the pause, at ${iso(d.at)} (${d.why}), and the site served ` +
        'normally after it',
    });
  } else {
    const how =
      d.servedNormallyAfter === false
        ? 'while the site still refused'
        : d.servedNormallyAfter === null
          ? 'with too little traffic after it to judge'
          : `${mins(waited)} after the pause, once the site had recovered`;
    Object.assign(i, {
      label: 'right-pause',
      judgedAt: i.loopPausedAt,
      because: `resumed by ${d.who} ${how}, at ${iso(d.at)} (${d.why})`,
    });
  }
}

/** Every incident of the record, labelled where the people's decisions or marks say something. */
export function deriveLabels(input: LabelInput): Incident[] {
  const moves = [...input.moves].sort((a, b) => a.at - b.at);
  const incidents = windows(moves, input.bandBefore, input.end);
  for (const i of incidents) fromDecisions(i, input.decisions);

  // A person's pause while the loop was calm or only degrading: the loop was late.
  for (const d of input.decisions.filter((x) => x.kind === 'pause')) {
    const band = moves.filter((m) => m.at < d.at).pop()?.to ?? input.bandBefore;
    const loopPausedBefore = incidents.some(
      (i) => inside(i, d.at) && i.loopPausedAt !== null && i.loopPausedAt <= d.at,
    );
    if (loopPausedBefore || band === 'resisting' || band === 'stopped') continue;
    let incident = incidents.find((i) => inside(i, d.at));
    if (incident === undefined) {
      incident = blank(d.at - LATE_LOOKBACK_MS, input.end);
      incident.to = moves.find((m) => m.at > d.at && isCalm(m.to))?.at ?? input.end;
      incidents.push(incident);
    }
    Object.assign(incident, {
      label: 'late-pause',
      judgedAt: d.at,
      because: `paused by hand by ${d.who} at ${iso(d.at)} while the loop was ${band ?? 'not yet banded'} (${d.why})`,
    });
  }
  incidents.sort((a, b) => a.from - b.from);

  // The latest mark of an incident outranks its decisions.
  for (const i of incidents) {
    const mark = input.marks
      .filter((m) => inside(i, m.incidentAt))
      .sort((a, b) => a.markedAt - b.markedAt)
      .pop();
    if (mark !== undefined) {
      const paused = i.loopPausedAt !== null;
      const label: LabelKind =
        mark.verdict === 'right' ? (paused ? 'right-pause' : 'right-warning') : paused ? 'false-pause' : 'false-alarm';
      const judgedAt = label === 'right-pause' ? i.loopPausedAt! : i.to;
      Object.assign(i, {
        label,
        judgedAt: label === 'false-pause' ? i.to : judgedAt,
        because:
          `marked ${mark.verdict === 'right' ? 'right' : 'false alarm'} by ${mark.who} at ` +
          `${iso(mark.markedAt)} (${mark.why})`,
      });
    }
    const change = input.settingsChanges.find((c) => c.at >= i.to && c.at <= i.to + SETTINGS_AFTER_MS);
    if (change !== undefined)
      i.settingsChangedAfter =
        `configure of ${iso(change.at)} by ${change.who}` + (change.why === null ? '' : ` (${change.why})`);
  }
  return incidents;
}

/** The labelled ones. */
export const labelled = (incidents: readonly Incident[]): Incident[] => incidents.filter((i) => i.label !== null);
