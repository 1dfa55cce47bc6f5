/**
 * What a site's loop did over a period — its ticks, control changes and alerts — read from the store where the
 * live loop ran, or from a replay made on the fly where it did not (tools/replay/record.ts): the one interface
 * `review`, `explain`, `history` and `chart` read, so each works on a back-filled period or on a candidate's
 * settings (`--config`) exactly as on live ticks, and says which it shows (client/loop-record/source.ts).
 */
import type { HealthBand } from '../../core/common/names';
import { ALERT_KINDS, type AlertKind } from '../../core/control/alerts';
import { type AssessmentAt, type ControlsAt, assessmentAtOrBefore, controlsAt } from '../../server/db/assessment-at';
import { type AssessmentPageRow, pageAssessments } from '../../server/db/assessments';
import { type ControlChange, bandBefore, changesBetween } from '../../server/db/history';
import { type StoredAlert, alertsBetween } from '../../server/db/notifications';
import type { Pool } from '../../server/db/pool';
import { type ReplayRecord, bandBeforeIn } from '../../tools/replay/record';
import type { ReplayedLoop } from '../../tools/charts/read-history';
import type { RecordSource } from './source';

export interface LoopRecord {
  source: RecordSource;
  /** The replay's rows themselves (the chart draws from them), or null for the store's. */
  replay: ReplayRecord | null;
  /** Ticks in [from, to), oldest first (without their assessments). */
  ticks(from: Date, to: Date): Promise<AssessmentPageRow[]>;
  /** The latest tick at or before `at`, with its assessment. */
  tickAtOrBefore(at: Date): Promise<AssessmentAt | undefined>;
  /** Control changes that took effect in [from, to), oldest first. */
  changes(from: Date, to: Date): Promise<ControlChange[]>;
  /** The band the last change before `at` left, or null. */
  bandBefore(at: Date): Promise<HealthBand | null>;
  /** The controls in effect at `at` and the change that made them. */
  controlsAt(at: Date): Promise<ControlsAt | undefined>;
  /** Route and parser alerts raised in [from, to). */
  alerts(from: Date, to: Date): Promise<StoredAlert[]>;
}

/** Rows per read of the assessments (keyset pages, the api's pageAssessments). */
const READ_PAGE = 10_000;

async function readTicks(pool: Pool, site: string, from: Date, to: Date): Promise<AssessmentPageRow[]> {
  const rows: AssessmentPageRow[] = [];
  let after: Parameters<typeof pageAssessments>[2]['after'];
  for (;;) {
    const page = await pageAssessments(pool, site, {
      from,
      to,
      limit: READ_PAGE,
      ...(after === undefined ? {} : { after }),
    });
    rows.push(...page.rows);
    if (page.next === null) return rows;
    after = page.next;
  }
}

/** The live loop's record, as PostgreSQL holds it. */
export function storedRecord(pool: Pool, site: string): LoopRecord {
  return {
    source: { kind: 'stored' },
    replay: null,
    ticks: (from, to) => readTicks(pool, site, from, to),
    tickAtOrBefore: (at) => assessmentAtOrBefore(pool, site, at),
    changes: (from, to) => changesBetween(pool, site, from, to),
    bandBefore: (at) => bandBefore(pool, site, at),
    controlsAt: (at) => controlsAt(pool, site, at),
    alerts: (from, to) => alertsBetween(pool, site, from, to),
  };
}

const within = (t: Date | string, from: Date, to: Date): boolean => {
  const ms = typeof t === 'string' ? Date.parse(t) : t.getTime();
  return ms >= from.getTime() && ms < to.getTime();
};

const isAlert = (kind: string): kind is AlertKind => (ALERT_KINDS as readonly string[]).includes(kind);

/** A replay's record, read the same way (its rows are all in memory). */
export function replayedRecord(record: ReplayRecord, source: RecordSource): LoopRecord {
  const { ticks, changes, notices } = record;
  const byKey = new Map(ticks.map((t) => [t.assessmentKey, t]));
  return {
    source,
    replay: record,
    ticks: (from, to) =>
      Promise.resolve(ticks.filter((t) => within(t.assessedAt, from, to)).map(({ result: _r, ...row }) => row)),
    tickAtOrBefore: (at) => {
      const row = ticks.filter((t) => Date.parse(t.assessedAt) <= at.getTime()).pop();
      return Promise.resolve(
        row === undefined || row.result === undefined
          ? undefined
          : {
              assessmentKey: row.assessmentKey,
              workflowId: row.workflowId,
              chainId: row.chainId,
              tick: row.tick,
              assessedAt: new Date(row.assessedAt).toISOString(),
              result: row.result,
            },
      );
    },
    changes: (from, to) => Promise.resolve(changes.filter((c) => within(c.at, from, to))),
    bandBefore: (at) => Promise.resolve(bandBeforeIn(changes, at)),
    controlsAt: (at) => {
      const c = changes.filter((x) => x.at.getTime() <= at.getTime()).pop();
      if (c === undefined) return Promise.resolve(undefined);
      const tick = c.decisionKey === null && c.assessmentKey !== null ? byKey.get(c.assessmentKey) : undefined;
      return Promise.resolve({
        controls: c.newControls,
        at: c.at,
        actor: c.actor,
        reason: c.reason,
        madeBy:
          tick === undefined ? null : { assessmentKey: tick.assessmentKey, tick: tick.tick, reasons: tick.reasons },
      });
    },
    alerts: (from, to) =>
      Promise.resolve(
        notices.flatMap((n) =>
          isAlert(n.kind) && within(n.at, from, to)
            ? [{ at: n.at, kind: n.kind, severity: n.severity, title: n.title }]
            : [],
        ),
      ),
  };
}

/** A replayed record as the chart reads the loop's part (tools/charts/read-history.ts); null for the store's. */
export function chartLoopOf(record: LoopRecord, from: number, to: number): ReplayedLoop | null {
  const r = record.replay;
  if (r === null || record.source.kind !== 'replayed') return null;
  const before = r.changes.filter((c) => c.at.getTime() < from).pop();
  return {
    // From the replay's start: its warm-up smooths the score the way the replay did.
    ticks: r.ticks
      .filter((t) => Date.parse(t.assessedAt) < to)
      .map((t) => ({ t: Date.parse(t.assessedAt), score: t.score, smoothed: t.smoothedScore })),
    audit: {
      opening: before === undefined ? null : { t: before.at.getTime(), band: before.newControls.band },
      changes: r.changes
        .filter((c) => c.at.getTime() >= from && c.at.getTime() < to)
        .map((c) => ({
          t: c.at.getTime(),
          actor: c.actor,
          reason: c.reason,
          oldControls: c.oldControls,
          newControls: c.newControls,
          decisionKey: c.decisionKey,
        })),
    },
    notifications: r.notices
      .filter((n) => n.at.getTime() >= from && n.at.getTime() < to)
      .map((n) => ({ ...n, t: n.at.getTime() })),
    note: `replayed (${record.source.why}) with ${record.source.settingsFrom}: no tick here is the live loop's`,
  };
}
