/**
 * The stored assessment a site's score stood on at a time: the latest tick assessed at or before it
 * (any chain of the site), and the controls in effect then — what `target-health explain --at` and
 * `status` read. The assessment: one backward step on `assessments (site, assessed_at DESC)`; the
 * controls: the site's `control_audit` rows (one per control change — few), as server/db/history.ts reads them.
 */
import type { Controls } from '../../core/control/controls';
import type { Pool } from './pool';

export interface AssessmentAt {
  assessmentKey: string;
  workflowId: string;
  chainId: string | null;
  tick: number;
  /** ISO-8601 (milliseconds). */
  assessedAt: string;
  /** The stored tick assessment (`assessments.result`), unchecked: read it through zod. */
  result: unknown;
}

/** The latest assessment of `site` at or before `at` (the latest of all with null), or undefined. */
export async function assessmentAtOrBefore(
  pool: Pool,
  site: string,
  at: Date | null,
): Promise<AssessmentAt | undefined> {
  const { rows } = await pool.query<{
    assessment_key: string;
    workflow_id: string;
    chain_id: string | null;
    tick: string;
    assessed_at: Date;
    result: unknown;
  }>(
    `SELECT assessment_key, workflow_id, chain_id, tick, assessed_at, result
       FROM assessments
      WHERE site = $1 AND ($2::timestamptz IS NULL OR assessed_at <= $2)
      ORDER BY assessed_at DESC, assessment_key DESC
      LIMIT 1`,
    [site, at],
  );
  const r = rows[0];
  return (
    r && {
      assessmentKey: r.assessment_key,
      workflowId: r.workflow_id,
      chainId: r.chain_id,
      tick: Number(r.tick),
      assessedAt: r.assessed_at.toISOString(),
      result: r.result,
    }
  );
}

export interface ControlsAt {
  controls: Controls & { version?: number };
  /** When the change took effect (its tick's time, or when a person's decision was written). */
  at: Date;
  actor: string;
  /** The change's own reason: the words of the tick or of the decision that made it. */
  reason: string;
  /** The tick that made the change (its key, number and reasons); null for a person's decision. */
  madeBy: { assessmentKey: string; tick: number; reasons: string[] } | null;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * The controls in effect at `at`: the latest `control_audit` change that took effect at or before it. A
 * change a tick made takes effect at the tick's time (so a tick's own change counts for that tick); a
 * decision's when it was written — as `history` lines them up (server/db/history.ts). With it, the tick
 * that made it and that tick's reasons (what put the site in its band: core/control/band-wording.ts).
 */
export async function controlsAt(pool: Pool, site: string, at: Date): Promise<ControlsAt | undefined> {
  const { rows } = await pool.query<{
    at: Date;
    actor: string;
    reason: string;
    new_controls: Controls & { version?: number };
    assessment_key: string | null;
    tick: string | null;
    reasons: unknown;
  }>(
    `SELECT at, actor, reason, new_controls, assessment_key, tick, reasons FROM (
       SELECT CASE WHEN c.decision_key IS NULL THEN COALESCE(a.assessed_at, c.changed_at) ELSE c.changed_at END AS at,
              c.actor, c.reason, c.new_controls, c.id,
              CASE WHEN c.decision_key IS NULL THEN a.assessment_key END AS assessment_key,
              CASE WHEN c.decision_key IS NULL THEN a.tick END AS tick,
              CASE WHEN c.decision_key IS NULL THEN a.result->'assessment'->'reasons' END AS reasons
         FROM control_audit c LEFT JOIN assessments a ON a.assessment_key = c.assessment_key
        WHERE c.site = $1) t
      WHERE at <= $2
      ORDER BY at DESC, id DESC
      LIMIT 1`,
    [site, at],
  );
  const r = rows[0];
  if (r === undefined) return undefined;
  const madeBy =
    r.assessment_key === null || r.tick === null
      ? null
      : { assessmentKey: r.assessment_key, tick: Number(r.tick), reasons: isStrings(r.reasons) ? r.reasons : [] };
  return { controls: r.new_controls, at: r.at, actor: r.actor, reason: r.reason, madeBy };
}
