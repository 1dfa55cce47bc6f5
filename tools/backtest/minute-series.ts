/**
 * A site's per-minute counts over a range, from the store's minute rollups (the all-routes row of
 * `rollup_minute`, the same rows a tick's current window sums): what the reference rules read. Minutes
 * without traffic have no row and are absent here (the rules count them as zero).
 */
import type { Pool } from '../../server/db/pool';
import { ALL_ROUTES } from '../../server/db/signal-store/aggregate';
import { countFromSql } from '../../server/db/signal-store/read-windows';
import type { MinuteCounts } from './reference-rules';

interface Row {
  minute: Date;
  requests: string;
  hard_blocks: string;
  challenges: string;
  soft_blocks: string;
  errors: string;
}

/** Minutes whose start is in [from, to), oldest first. */
export async function readMinuteSeries(
  pool: Pool,
  site: string,
  range: { from: Date; to: Date },
): Promise<MinuteCounts[]> {
  const { rows } = await pool.query<Row>(
    `SELECT bucket AS minute, requests, hard_blocks, challenges, soft_blocks, errors
     FROM rollup_minute WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4
     ORDER BY bucket`,
    [site, ALL_ROUTES, range.from, range.to],
  );
  return rows.map((r) => ({
    minute: r.minute.getTime(),
    requests: countFromSql(r.requests),
    hardBlocks: countFromSql(r.hard_blocks),
    challenges: countFromSql(r.challenges),
    softBlocks: countFromSql(r.soft_blocks),
    errors: countFromSql(r.errors),
  }));
}
