/**
 * People's verdicts on incidents (`incident_marks`): written by `target-health review --mark`, read by `target-health
 * tune` as labels. Insert-only; the latest mark of an incident counts.
 */
import type { Pool } from './pool';

export type MarkVerdict = 'right' | 'false_alarm';

export interface IncidentMark {
  site: string;
  incidentAt: Date;
  /** The incident's window as `review --mark` found it; null for a mark made through the API (the time only). */
  incidentFrom: Date | null;
  incidentTo: Date | null;
  verdict: MarkVerdict;
  who: string;
  why: string;
}

export interface StoredIncidentMark extends IncidentMark {
  id: string;
  markedAt: Date;
}

interface Row {
  id: string;
  site: string;
  incident_at: Date;
  incident_from: Date | null;
  incident_to: Date | null;
  verdict: MarkVerdict;
  who: string;
  why: string;
  marked_at: Date;
}

const fromRow = (r: Row): StoredIncidentMark => ({
  id: r.id,
  site: r.site,
  incidentAt: r.incident_at,
  incidentFrom: r.incident_from,
  incidentTo: r.incident_to,
  verdict: r.verdict,
  who: r.who,
  why: r.why,
  markedAt: r.marked_at,
});

export async function recordIncidentMark(pool: Pool, m: IncidentMark): Promise<StoredIncidentMark> {
  const { rows } = await pool.query<Row>(
    `INSERT INTO incident_marks (site, incident_at, incident_from, incident_to, verdict, who, why)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [m.site, m.incidentAt, m.incidentFrom, m.incidentTo, m.verdict, m.who, m.why],
  );
  return fromRow(rows[0]!);
}

/** The marks of incidents at times in [from, to], oldest mark first. */
export async function marksBetween(pool: Pool, site: string, from: Date, to: Date): Promise<StoredIncidentMark[]> {
  const { rows } = await pool.query<Row>(
    `SELECT * FROM incident_marks WHERE site = $1 AND incident_at >= $2 AND incident_at <= $3
      ORDER BY marked_at, id`,
    [site, from, to],
  );
  return rows.map(fromRow);
}
