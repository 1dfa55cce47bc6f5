/** The assessments history: one row per tick of a site's loop, written once per idempotency key. */
import type { Pool } from './pool';

export interface StoredAssessment<R> {
  assessmentKey: string;
  tick: number;
  assessedAt: Date;
  result: R;
  /** False when the row already existed (a retried activity): the stored result is returned as is. */
  inserted: boolean;
}

export async function recordAssessmentOnce<R>(
  pool: Pool,
  row: { assessmentKey: string; site: string; workflowId: string; tick: number; result: R },
): Promise<StoredAssessment<R>> {
  const inserted = await pool.query(
    `INSERT INTO assessments (assessment_key, site, workflow_id, tick, result) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (assessment_key) DO NOTHING`,
    [row.assessmentKey, row.site, row.workflowId, row.tick, JSON.stringify(row.result)],
  );
  const { rows } = await pool.query<{ assessment_key: string; tick: string; assessed_at: Date; result: R }>(
    'SELECT assessment_key, tick, assessed_at, result FROM assessments WHERE assessment_key = $1',
    [row.assessmentKey],
  );
  const stored = rows[0]!;
  return { assessmentKey: stored.assessment_key, tick: Number(stored.tick), assessedAt: stored.assessed_at, result: stored.result, inserted: inserted.rowCount === 1 };
}

export async function countAssessments(pool: Pool, site: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM assessments WHERE site = $1', [site]);
  return Number(rows[0]?.n ?? 0);
}
