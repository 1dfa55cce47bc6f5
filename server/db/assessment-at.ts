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
  reason: string;
}

/**
 * The controls in effect at `at`: the latest `control_audit` change that took effect at or before it. A
 * change a tick made takes effect at the tick's time (so a tick's own change counts for that tick); a
 * decision's when it was written — as `history` lines them up (server/db/history.ts).
 */
export async function controlsAt(pool: Pool, site: string, at: Date): Promise<ControlsAt | undefined> {
  const { rows } = await pool.query<{
    at: Date;
    actor: string;
    reason: string;
    new_controls: Controls & { version?: number };
  }>(
    `SELECT at, actor, reason, new_controls FROM (
       SELECT CASE WHEN c.decision_key IS NULL THEN COALESCE(a.assessed_at, c.changed_at) ELSE c.changed_at END AS at,
              c.actor, c.reason, c.new_controls, c.id
         FROM control_audit c LEFT JOIN assessments a ON a.assessment_key = c.assessment_key
        WHERE c.site = $1) t
      WHERE at <= $2
      ORDER BY at DESC, id DESC
      LIMIT 1`,
    [site, at],
  );
  const r = rows[0];
  return r && { controls: r.new_controls, at: r.at, actor: r.actor, reason: r.reason };
}
