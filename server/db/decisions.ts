/** Human decisions (resume, stop, pause), each stored once with the assessment that led to it. */
import type pg from 'pg';
import type { ResumeMode } from '../../core/control/decisions';
import type { Pool } from './pool';
import { storableJson } from '@target-health/crawler/events/well-formed';

type Queryable = Pick<pg.PoolClient, 'query'> | Pool;

export interface DecisionRow {
  decisionKey: string;
  site: string;
  workflowId: string;
  chainId: string;
  kind: 'resume' | 'stop' | 'pause';
  who: string;
  why: string;
  mode: ResumeMode | null;
  via: 'signal' | 'update';
  assessmentKey: string | null;
  awaitingSince: string | null;
}

/** Inserts the decision unless its key is already stored; returns its (first) decision time. */
export async function recordDecisionOnce(
  db: Queryable,
  d: DecisionRow,
): Promise<{ decidedAt: Date; inserted: boolean }> {
  const inserted = await db.query(
    `INSERT INTO decisions (decision_key, site, workflow_id, chain_id, kind, who, why, mode, via, assessment_key,
                            awaiting_since)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (decision_key) DO NOTHING`,
    [
      d.decisionKey,
      d.site,
      d.workflowId,
      d.chainId,
      d.kind,
      d.who,
      d.why,
      d.mode === null ? null : storableJson(d.mode),
      d.via,
      d.assessmentKey,
      d.awaitingSince,
    ],
  );
  const { rows } = await db.query<{ decided_at: Date }>('SELECT decided_at FROM decisions WHERE decision_key = $1', [
    d.decisionKey,
  ]);
  return { decidedAt: rows[0]!.decided_at, inserted: inserted.rowCount === 1 };
}

export interface StoredDecision extends Omit<DecisionRow, 'awaitingSince'> {
  awaitingSince: Date | null;
  decidedAt: Date;
}

interface StoredRow {
  decision_key: string;
  site: string;
  workflow_id: string;
  chain_id: string;
  kind: DecisionRow['kind'];
  who: string;
  why: string;
  mode: ResumeMode | null;
  via: DecisionRow['via'];
  assessment_key: string | null;
  awaiting_since: Date | null;
  decided_at: Date;
}

const toStored = (r: StoredRow): StoredDecision => ({
  decisionKey: r.decision_key,
  site: r.site,
  workflowId: r.workflow_id,
  chainId: r.chain_id,
  kind: r.kind,
  who: r.who,
  why: r.why,
  mode: r.mode,
  via: r.via,
  assessmentKey: r.assessment_key,
  awaitingSince: r.awaiting_since,
  decidedAt: r.decided_at,
});

export async function listDecisions(db: Queryable, site: string): Promise<StoredDecision[]> {
  const { rows } = await db.query<StoredRow>(
    'SELECT * FROM decisions WHERE site = $1 ORDER BY decided_at, decision_key',
    [site],
  );
  return rows.map(toStored);
}

/** One site's decision by its key (the console's result page), or undefined. */
export async function findDecision(
  db: Queryable,
  site: string,
  decisionKey: string,
): Promise<StoredDecision | undefined> {
  const { rows } = await db.query<StoredRow>('SELECT * FROM decisions WHERE decision_key = $1 AND site = $2', [
    decisionKey,
    site,
  ]);
  return rows[0] && toStored(rows[0]);
}
