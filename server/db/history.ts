/**
 * Reads behind the on-call views (`target-health sites`, `history`, and `GET /v1/sites`): the latest
 * control change of many sites at once, and a site's control changes and decisions over a time range.
 * Every query walks an index by site: `control_audit (site, changed_at DESC, id DESC)`,
 * `decisions (site, decided_at DESC)`, `assessments (site, assessed_at DESC)` and the primary keys.
 */
import type { Controls } from '../../core/control/controls';
import type { HealthBand } from '../../core/common/names';
import type { Pool } from './pool';

/** One `control_audit` row as the on-call views show it. */
export interface ControlChange {
  /** When it took effect: the tick's time for a change a tick caused, else the time it was written. */
  at: Date;
  changedAt: Date;
  actor: string;
  reason: string;
  oldControls: Controls | null;
  newControls: Controls & { version: number };
  assessmentKey: string | null;
  decisionKey: string | null;
}

interface ChangeRow {
  at: Date;
  changed_at: Date;
  actor: string;
  reason: string;
  old_controls: Controls | null;
  new_controls: Controls & { version: number };
  assessment_key: string | null;
  decision_key: string | null;
}

const toChange = (r: ChangeRow): ControlChange => ({
  at: r.at,
  changedAt: r.changed_at,
  actor: r.actor,
  reason: r.reason,
  oldControls: r.old_controls,
  newControls: r.new_controls,
  assessmentKey: r.assessment_key,
  decisionKey: r.decision_key,
});

// The time a change belongs to: a tick's change is the tick's (its assessment's slot time), so it lines
// up with the tick's row; a decision's is when it was written (it also names the assessment that led to
// it, which may be several ticks older).
const AT = `CASE WHEN c.decision_key IS NULL THEN COALESCE(a.assessed_at, c.changed_at) ELSE c.changed_at END`;
const CHANGE_COLUMNS =
  `${AT} AS at, c.changed_at, c.actor, c.reason, c.old_controls, c.new_controls, c.assessment_key, ` + `c.decision_key`;

/**
 * The latest control change of each of these sites, in one statement: one backward step on the
 * `(site, changed_at DESC, id DESC)` index per site, so 5,000 sites cost 5,000 index probes (milliseconds).
 */
export async function latestChanges(pool: Pool, sites: readonly string[]): Promise<Map<string, ControlChange>> {
  if (sites.length === 0) return new Map();
  const { rows } = await pool.query<ChangeRow & { site: string }>(
    `SELECT s.site, x.*
       FROM unnest($1::text[]) AS s(site)
       CROSS JOIN LATERAL (
         SELECT ${CHANGE_COLUMNS}
           FROM control_audit c LEFT JOIN assessments a ON a.assessment_key = c.assessment_key
          WHERE c.site = s.site
          ORDER BY c.changed_at DESC, c.id DESC
          LIMIT 1) x`,
    [sites],
  );
  return new Map(rows.map((r) => [r.site, toChange(r)]));
}

/** A site's control changes that took effect in [from, to), oldest first. */
export async function changesBetween(pool: Pool, site: string, from: Date, to: Date): Promise<ControlChange[]> {
  const { rows } = await pool.query<ChangeRow>(
    `SELECT * FROM (
       SELECT ${CHANGE_COLUMNS}, c.id
         FROM control_audit c LEFT JOIN assessments a ON a.assessment_key = c.assessment_key
        WHERE c.site = $1) t
      WHERE at >= $2 AND at < $3
      ORDER BY at, id`,
    [site, from, to],
  );
  return rows.map(toChange);
}

/** The loop's band in effect just before `from` (the last change before it), or null when none was recorded. */
export async function bandBefore(pool: Pool, site: string, from: Date): Promise<HealthBand | null> {
  const { rows } = await pool.query<{ band: HealthBand }>(
    `SELECT band FROM (
       SELECT c.new_controls ->> 'band' AS band, ${AT} AS at, c.id
         FROM control_audit c LEFT JOIN assessments a ON a.assessment_key = c.assessment_key
        WHERE c.site = $1) t
      WHERE at < $2
      ORDER BY at DESC, id DESC
      LIMIT 1`,
    [site, from],
  );
  return rows[0]?.band ?? null;
}

export interface DecisionEvent {
  at: Date;
  kind: string;
  who: string;
  why: string;
  decisionKey: string;
}

/** A site's human decisions in [from, to), oldest first. */
export async function decisionsBetween(pool: Pool, site: string, from: Date, to: Date): Promise<DecisionEvent[]> {
  const { rows } = await pool.query<{ decided_at: Date; kind: string; who: string; why: string; decision_key: string }>(
    `SELECT decided_at, kind, who, why, decision_key FROM decisions
      WHERE site = $1 AND decided_at >= $2 AND decided_at < $3
      ORDER BY decided_at, decision_key`,
    [site, from, to],
  );
  return rows.map((r) => ({ at: r.decided_at, kind: r.kind, who: r.who, why: r.why, decisionKey: r.decision_key }));
}

/** What the store holds of a site: its first and last assessment, and whether it is known at all. */
export async function siteSpan(
  pool: Pool,
  site: string,
): Promise<{ known: boolean; first: Date | null; last: Date | null }> {
  const { rows } = await pool.query<{ first: Date | null; last: Date | null; known: boolean }>(
    `SELECT (SELECT min(assessed_at) FROM assessments WHERE site = $1) AS first,
            (SELECT max(assessed_at) FROM assessments WHERE site = $1) AS last,
            EXISTS (SELECT 1 FROM sites WHERE site = $1) OR EXISTS (SELECT 1 FROM site_controls WHERE site = $1)
              OR EXISTS (SELECT 1 FROM assessments WHERE site = $1) AS known`,
    [site],
  );
  const r = rows[0]!;
  return { known: r.known, first: r.first, last: r.last };
}
