/**
 * The site's latest incident, for a review asked for without a time (the console's Review page without
 * `?incident=`): the last change of its published band into `degrading` or `resisting` from a band that was
 * neither (control_audit). Given as `--incident`, that moment anchors the same window `target-health review`
 * finds around it (./find-incident.ts).
 */
import type { Pool } from '../../server/db/pool';

export async function latestIncidentAt(pool: Pool, site: string): Promise<Date | null> {
  // Newest first along control_audit_site_time: the first row that qualifies ends the scan.
  const { rows } = await pool.query<{ at: Date }>(
    `SELECT changed_at AS at FROM control_audit
      WHERE site = $1 AND new_controls->>'band' IN ('degrading', 'resisting')
        AND (old_controls IS NULL OR old_controls->>'band' NOT IN ('degrading', 'resisting'))
      ORDER BY changed_at DESC, id DESC LIMIT 1`,
    [site],
  );
  return rows[0]?.at ?? null;
}
