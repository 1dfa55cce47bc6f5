/**
 * The labels' input from what the store holds (pure): control changes as band moves with who made them, stored
 * marks and settings changes as times, and the windows incidents cover (quiet days keep out of them).
 */
import type { HealthBand } from '../../core/common/names';
import { LOOP_ACTOR } from '../../tools/charts/mark-labels';
import type { ControlChange } from '../../server/db/history';
import type { StoredIncidentMark } from '../../server/db/incident-marks';
import type { StoredSettingsChange } from '../../server/db/settings-changes';
import type { Incident, LabelDecision, LabelInput, LabelMove } from './labels';

export function movesOf(changes: readonly ControlChange[]): LabelMove[] {
  return changes
    .filter((c) => c.oldControls === null || c.oldControls.band !== c.newControls.band)
    .map((c) => ({
      at: c.at.getTime(),
      from: c.oldControls?.band ?? null,
      to: c.newControls.band,
      byLoop: c.actor === LOOP_ACTOR,
      paused: c.newControls.paused,
    }));
}

export function labelInputOf(o: {
  changes: readonly ControlChange[];
  bandBefore: HealthBand | null;
  decisions: readonly LabelDecision[];
  marks: readonly StoredIncidentMark[];
  settings: readonly StoredSettingsChange[];
  end: number;
}): LabelInput {
  return {
    moves: movesOf(o.changes),
    bandBefore: o.bandBefore,
    decisions: o.decisions,
    marks: o.marks.map((m) => ({
      incidentAt: m.incidentAt.getTime(),
      verdict: m.verdict,
      who: m.who,
      why: m.why,
      markedAt: m.markedAt.getTime(),
    })),
    settingsChanges: o.settings.map((s) => ({ at: s.changedAt.getTime(), who: s.who, why: s.why })),
    end: o.end,
  };
}

/** The stretches incidents cover (labelled or not): no quiet day overlaps one. */
export const incidentWindows = (incidents: readonly Incident[]): { from: number; to: number }[] =>
  incidents.map((i) => ({ from: i.from, to: Math.max(i.to, i.judgedAt) }));
