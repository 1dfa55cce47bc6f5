/** The assessments history: one row per tick of a site's loop, written once per idempotency key. */
import type { Pool } from './pool';
import { storableJson } from '../common/well-formed';

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
  row: { assessmentKey: string; site: string; workflowId: string; chainId?: string; tick: number; assessedAt?: Date; result: R },
): Promise<StoredAssessment<R>> {
  const inserted = await pool.query(
    `INSERT INTO assessments (assessment_key, site, workflow_id, chain_id, tick, assessed_at, result)
     VALUES ($1, $2, $3, $4, $5, COALESCE($6, now()), $7)
     ON CONFLICT (assessment_key) DO NOTHING`,
    [row.assessmentKey, row.site, row.workflowId, row.chainId ?? null, row.tick, row.assessedAt ?? null, storableJson(row.result)],
  );
  const stored = (await findAssessment<R>(pool, row.assessmentKey))!;
  return { ...stored, inserted: inserted.rowCount === 1 };
}

export async function findAssessment<R>(pool: Pool, assessmentKey: string): Promise<Omit<StoredAssessment<R>, 'inserted'> | undefined> {
  const { rows } = await pool.query<{ assessment_key: string; tick: string; assessed_at: Date; result: R }>(
    'SELECT assessment_key, tick, assessed_at, result FROM assessments WHERE assessment_key = $1',
    [assessmentKey],
  );
  const r = rows[0];
  return r && { assessmentKey: r.assessment_key, tick: Number(r.tick), assessedAt: r.assessed_at, result: r.result };
}

export async function countAssessments(pool: Pool, site: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM assessments WHERE site = $1', [site]);
  return Number(rows[0]?.n ?? 0);
}

export interface AssessmentHistoryRow {
  tick: number;
  assessedAt: Date;
  score: number | null;
  parserHealth: number | null;
  workflowId: string;
}

/** The newest `limit` assessments of a site (the score over time), newest first. */
export async function assessmentHistory(pool: Pool, site: string, limit: number): Promise<AssessmentHistoryRow[]> {
  const { rows } = await pool.query<{ tick: string; assessed_at: Date; score: number | null; parser_health: number | null; workflow_id: string }>(
    'SELECT tick, assessed_at, score, parser_health, workflow_id FROM assessments WHERE site = $1 ORDER BY assessed_at DESC LIMIT $2',
    [site, limit],
  );
  return rows.map((r) => ({ tick: Number(r.tick), assessedAt: r.assessed_at, score: r.score, parserHealth: r.parser_health, workflowId: r.workflow_id }));
}
