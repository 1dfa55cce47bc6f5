/**
 * A site's controls written as the loop's action activity writes them (row lock, upsert with the next
 * version, audit row, NOTIFY th_controls by trigger): what the API, the controls clients and the
 * crawler integrations then serve or obey. For tests that need controls without running a loop.
 */
import { randomUUID } from 'node:crypto';
import { workflowIdForSite } from '../../core/common/names';
import type { Controls } from '../../core/control/controls';
import { controlsOf, readControls, writeControls } from '../../server/db/controls';
import type { Pool } from '../../server/db/pool';

export const NOMINAL_CONTROLS: Controls = {
  concurrencyLimit: 16,
  revisitMultiplier: 1,
  paused: false,
  canaryOnly: false,
  effectiveCostMultiplier: 1,
  band: 'healthy',
  reason: 'nominal',
};

/** Applies `patch` to the site's controls (nominal ones when it has none yet); returns the new version. */
export async function changeControls(pool: Pool, site: string, patch: Partial<Controls>): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const old = await readControls(client, site, { forUpdate: true });
    const next = { ...(old ? controlsOf(old) : NOMINAL_CONTROLS), ...patch };
    const { version } = await writeControls(
      client,
      {
        site,
        workflowId: workflowIdForSite(site),
        actionKey: `test/${randomUUID()}`,
        next,
        changedFields: Object.keys(patch),
        routeDiagnosis: null,
        assessmentKey: null,
        decisionKey: null,
        actor: 'test',
      },
      old,
    );
    await client.query('COMMIT');
    return version;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}
