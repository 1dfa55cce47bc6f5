/**
 * A replay as the store's readers return the live loop's record: each tick as an `assessments` row
 * (server/db/assessments.ts, with its assessment), each control change as a `control_audit` row
 * (server/db/history.ts), each notice as an outbox row — so `review`, `explain`, `history` and `chart` read a
 * period the live loop never ran over (a back-fill, a new site) or a candidate's settings the same way they
 * read stored ticks. Built in memory from the engine's callbacks; nothing is written.
 */
import type { HealthBand } from '../../core/common/names';
import type { Controls } from '../../core/control/controls';
import type { NoticeKind, Severity } from '../../core/control/notices';
import type { AssessmentPageRow } from '../../server/db/assessments';
import type { ControlChange } from '../../server/db/history';
import type { Pool } from '../../server/db/pool';
import { type DecisionDetail, type ReplayOptions, type TickDetail, replaySite } from './engine';
import type { ReplayResult, ReplayTick } from './types';

/** A notice the replay would have queued, as the outbox holds it (the parts the readers use). */
export interface RecordedNotice {
  at: Date;
  kind: NoticeKind;
  severity: Severity;
  title: string;
  parserHealth: number | null;
  suspects: { dimension: string; value: string }[];
}

export interface ReplayRecord {
  /** One row per tick, with `result` (the tick's assessment as the activity stores it). */
  ticks: AssessmentPageRow[];
  /** Every control change: the ticks' (at the tick's time) and the decisions' (at the decision's time). */
  changes: ControlChange[];
  notices: RecordedNotice[];
}

const WORKFLOW = (site: string): string => `replay:${site}`;

function tickRow(site: string, t: ReplayTick, d: TickDetail): AssessmentPageRow {
  const a = d.assessed;
  const { assessmentKey: key, tick: _tick, assessedAt: _at, ...result } = a ?? { assessmentKey: '', tick: 0 };
  return {
    assessmentKey: a === null ? `${site}/replay/${t.tick}` : key,
    workflowId: WORKFLOW(site),
    chainId: 'replay',
    tick: t.tick,
    assessedAt: t.asOf,
    state: a === null ? null : a.assessment.state,
    score: t.score,
    parserHealth: t.parserHealth,
    smoothedScore: t.smoothedScore,
    scoredBand: t.scoredBand,
    reasons: a === null ? [] : [...a.assessment.reasons],
    ...(a === null ? {} : { result }),
  };
}

function changeRow(
  at: Date,
  before: Controls | null,
  after: Controls,
  version: number,
  o: { actor: string; assessmentKey: string | null; decisionKey: string | null },
): ControlChange {
  return {
    at,
    changedAt: at,
    actor: o.actor,
    reason: after.reason,
    oldControls: before,
    newControls: { ...after, version },
    assessmentKey: o.assessmentKey,
    decisionKey: o.decisionKey,
  };
}

/** Runs the replay and keeps its record beside the usual result. */
export async function replayWithRecord(
  pool: Pool,
  opts: Omit<ReplayOptions, 'onTick' | 'onDecision'>,
): Promise<{ result: ReplayResult; record: ReplayRecord }> {
  const record: ReplayRecord = { ticks: [], changes: [], notices: [] };
  let version = 0;
  const onTick = (t: ReplayTick, d: TickDetail): void => {
    const row = tickRow(opts.site, t, d);
    record.ticks.push(row);
    const at = new Date(t.asOf);
    if (d.plan.change !== null) {
      version += 1;
      record.changes.push(
        changeRow(at, d.controlsBefore, d.plan.change.next, version, {
          actor: 'control-loop',
          assessmentKey: row.assessmentKey,
          decisionKey: null,
        }),
      );
    }
    for (const n of d.plan.notices)
      record.notices.push({
        at,
        kind: n.kind,
        severity: n.severity,
        title: n.title,
        parserHealth: n.evidence.parserHealth,
        suspects: (n.evidence.routes?.suspects ?? []).map((s) => ({ dimension: s.dimension, value: s.value })),
      });
  };
  const onDecision = (d: DecisionDetail): void => {
    if (d.problem !== null || d.controlsAfter === null || d.controlsAfter === d.controlsBefore) return;
    version += 1;
    record.changes.push(
      changeRow(new Date(d.decision.at), d.controlsBefore, d.controlsAfter, version, {
        actor: `human:${d.decision.decision.who}`,
        assessmentKey: null,
        decisionKey: d.decisionKey,
      }),
    );
  };
  const result = await replaySite(pool, { ...opts, onTick, onDecision });
  return { result, record };
}

/** The band in effect before `at`: the last change before it, or null. */
export function bandBeforeIn(changes: readonly ControlChange[], at: Date): HealthBand | null {
  let band: HealthBand | null = null;
  for (const c of changes) if (c.at < at) band = c.newControls.band;
  return band;
}
