/** The assessments history: one row per tick of a site's loop, written once per idempotency key. */
import type { Pool } from './pool';
import { storableJson } from '@target-health/crawler/events/well-formed';
import { z } from 'zod';
import { HEALTH_BANDS, type HealthBand } from '../../core/common/names';

const bandColumn = z.enum(HEALTH_BANDS).nullable();

/** A stored scored band read back (a generated column of the row's JSON): a band, or null (none, or not one). */
function storedBand(value: string | null): HealthBand | null {
  const parsed = bandColumn.safeParse(value);
  return parsed.success ? parsed.data : null;
}

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
  row: {
    assessmentKey: string;
    site: string;
    workflowId: string;
    chainId?: string;
    tick: number;
    assessedAt?: Date;
    result: R;
  },
): Promise<StoredAssessment<R>> {
  const inserted = await pool.query(
    `INSERT INTO assessments (assessment_key, site, workflow_id, chain_id, tick, assessed_at, result)
     VALUES ($1, $2, $3, $4, $5, COALESCE($6, now()), $7)
     ON CONFLICT (assessment_key) DO NOTHING`,
    [
      row.assessmentKey,
      row.site,
      row.workflowId,
      row.chainId ?? null,
      row.tick,
      row.assessedAt ?? null,
      storableJson(row.result),
    ],
  );
  const stored = (await findAssessment<R>(pool, row.assessmentKey))!;
  return { ...stored, inserted: inserted.rowCount === 1 };
}

export async function findAssessment<R>(
  pool: Pool,
  assessmentKey: string,
): Promise<Omit<StoredAssessment<R>, 'inserted'> | undefined> {
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
  const { rows } = await pool.query<{
    tick: string;
    assessed_at: Date;
    score: number | null;
    parser_health: number | null;
    workflow_id: string;
  }>(
    'SELECT tick, assessed_at, score, parser_health, workflow_id FROM assessments WHERE site = $1 ORDER BY ' +
      'assessed_at DESC LIMIT $2',
    [site, limit],
  );
  return rows.map((r) => ({
    tick: Number(r.tick),
    assessedAt: r.assessed_at,
    score: r.score,
    parserHealth: r.parser_health,
    workflowId: r.workflow_id,
  }));
}

/** One assessment as a page of history shows it: the scores and reasons, the full result on request. */
export interface AssessmentPageRow {
  assessmentKey: string;
  workflowId: string;
  chainId: string | null;
  tick: number;
  /** ISO-8601 with microseconds (the database's precision: the cursor must not skip rows of the same millisecond). */
  assessedAt: string;
  state: string | null;
  score: number | null;
  /**
   * The tick's rounded smoothed score as the loop judged its band on it (`result.scoring`, migration 011).
   * Null when the site had none yet, and for rows stored before it was (then `scoredBand` is null too).
   */
  smoothedScore: number | null;
  /** The band the score put the site in (before the loop's gate); null for rows stored before it was. */
  scoredBand: HealthBand | null;
  parserHealth: number | null;
  reasons: string[];
  /** The stored tick assessment, when asked for. */
  result?: unknown;
}

/** Where the next page starts: after this (time, key) pair, in (assessed_at, assessment_key) order. */
export interface AssessmentCursor {
  assessedAt: string;
  assessmentKey: string;
}

/**
 * A site's assessments in [from, to), oldest first, `limit` at a time, keyset-paged on (assessed_at,
 * assessment_key): a page costs one index range scan however deep it is, and rows written meanwhile
 * never shift a page. Returns the rows and the cursor of the next page (null on the last one).
 */
export async function pageAssessments(
  pool: Pool,
  site: string,
  o: { from?: Date; to?: Date; limit: number; after?: AssessmentCursor; withResult?: boolean },
): Promise<{ rows: AssessmentPageRow[]; next: AssessmentCursor | null }> {
  const { rows } = await pool.query<{
    assessment_key: string;
    workflow_id: string;
    chain_id: string | null;
    tick: string;
    assessed_at: string;
    state: string | null;
    score: number | null;
    smoothed_score: number | null;
    scored_band: string | null;
    parser_health: number | null;
    reasons: string[] | null;
    result?: unknown;
  }>(
    `SELECT assessment_key, workflow_id, chain_id, tick,
            to_char(assessed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS assessed_at,
            result #>> '{assessment,state}' AS state, score, smoothed_score, scored_band, parser_health,
            CASE WHEN jsonb_typeof(result #> '{assessment,reasons}') = 'array'
                 THEN ARRAY(SELECT jsonb_array_elements_text(result #> '{assessment,reasons}')) END AS reasons
            ${o.withResult ? ', result' : ''}
       FROM assessments
      WHERE site = $1
        AND ($2::timestamptz IS NULL OR assessed_at >= $2)
        AND ($3::timestamptz IS NULL OR assessed_at < $3)
        AND ($4::timestamptz IS NULL OR (assessed_at, assessment_key) > ($4::timestamptz, $5::text))
      ORDER BY assessed_at, assessment_key
      LIMIT $6`,
    [site, o.from ?? null, o.to ?? null, o.after?.assessedAt ?? null, o.after?.assessmentKey ?? null, o.limit + 1],
  );
  const more = rows.length > o.limit;
  const page = rows.slice(0, o.limit).map((r) => ({
    assessmentKey: r.assessment_key,
    workflowId: r.workflow_id,
    chainId: r.chain_id,
    tick: Number(r.tick),
    assessedAt: r.assessed_at,
    state: r.state,
    score: r.score,
    smoothedScore: r.smoothed_score,
    scoredBand: storedBand(r.scored_band),
    parserHealth: r.parser_health,
    reasons: r.reasons ?? [],
    ...(o.withResult ? { result: r.result } : {}),
  }));
  const last = page[page.length - 1];
  return { rows: page, next: more && last ? { assessedAt: last.assessedAt, assessmentKey: last.assessmentKey } : null };
}

/** The latest assessment's raw score (and its time) of each of these sites, in one query. */
export async function latestScores(
  pool: Pool,
  sites: readonly string[],
): Promise<Map<string, { score: number | null; assessedAt: Date }>> {
  if (sites.length === 0) return new Map();
  const { rows } = await pool.query<{ site: string; score: number | null; assessed_at: Date }>(
    `SELECT s.site, a.score, a.assessed_at
       FROM unnest($1::text[]) AS s(site)
       CROSS JOIN LATERAL (SELECT score, assessed_at FROM assessments
                            WHERE site = s.site ORDER BY assessed_at DESC LIMIT 1) a`,
    [sites],
  );
  return new Map(rows.map((r) => [r.site, { score: r.score, assessedAt: r.assessed_at }]));
}
