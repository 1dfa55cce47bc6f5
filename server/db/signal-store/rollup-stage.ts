/**
 * Rollup deltas into their tables through a staging table: COPY the batch's rows of a level into a
 * temporary table of the connection, then one INSERT ... SELECT ... ON CONFLICT adds them to the rollup.
 *
 * Why not `INSERT ... SELECT FROM unnest($1::text[], …)` (the earlier way): PostgreSQL parsed 23 array
 * literals per statement, each latency histogram twice (as a text[] element, then as int[]); in a sparse
 * batch (a back-fill over many sites and days: about one minute row per event) that parsing was ~40% of
 * the statement, and building the literals a visible part of Node's share. COPY's text format is parsed
 * field by field without quoting, and the staging table is temporary (no WAL). Measured on this VM with
 * 6,000 minute rows: ~35 µs a row the old way, ~22 µs this way (wall, Node and PostgreSQL together).
 *
 * One staging table per level, `ON COMMIT DELETE ROWS`: a batch's rows are gone at its COMMIT, and a
 * rolled-back batch takes its staged rows with it. The tables are created once per connection, outside
 * any transaction (so a rolled-back batch cannot take the table itself away).
 */
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { ROLLUP_TABLE, type RollupDelta, type RollupLevel } from './aggregate';
import { field } from './copy-raw';

/** Count columns and the delta fields they hold, in table order. */
export const COUNT_COLUMNS = [
  ['requests', 'requests'],
  ['ok', 'ok'],
  ['hard_blocks', 'hardBlocks'],
  ['challenges', 'challenges'],
  ['soft_blocks', 'softBlocks'],
  ['errors', 'errors'],
  ['extraction_ok', 'extractionOk'],
  ['extraction_missing', 'extractionMissing'],
  ['extraction_schema', 'extractionSchema'],
  ['extraction_empty', 'extractionEmpty'],
  ['valid_records', 'validRecords'],
  ['retries', 'retries'],
  ['bytes', 'bytes'],
  ['credits', 'credits'],
  ['canary_runs', 'canaryRuns'],
  ['canary_failures', 'canaryFailures'],
] as const satisfies ReadonlyArray<readonly [string, keyof RollupDelta]>;

const SUMMED = COUNT_COLUMNS.map(([c]) => c);
const COLUMNS = `site, bucket, route_key, country, pool, session, ${SUMMED.join(', ')}, latency_hist`;
/** Fixed names (never built from input). */
const STAGE_TABLE: Readonly<Record<RollupLevel, string>> = {
  minute: 'th_stage_rollup_minute',
  hour: 'th_stage_rollup_hour',
  day: 'th_stage_rollup_day',
};

/** Connections that have the staging tables (a connection lost and made again is a new client). */
const staged = new WeakSet<PoolClient>();

/** Creates the connection's staging tables if it has none yet; call outside a transaction. */
export async function ensureRollupStage(client: PoolClient): Promise<void> {
  if (staged.has(client)) return;
  for (const level of Object.keys(STAGE_TABLE) as RollupLevel[]) {
    await client.query(
      `CREATE TEMP TABLE IF NOT EXISTS ${STAGE_TABLE[level]} (LIKE ${ROLLUP_TABLE[level]} INCLUDING DEFAULTS) ` +
        `ON COMMIT DELETE ROWS`,
    );
  }
  staged.add(client);
}

/** `"0,".repeat(n)` by n: a histogram of a few events is mostly leading zeros (latencies start near bucket 90). */
const zeroRuns: string[] = [];

/** An int[] literal; trailing zeros left out (th_hist_add counts missing buckets as 0). */
export function histLiteral(h: readonly number[] | null): string | null {
  if (!h) return null;
  let end = h.length;
  while (end > 0 && h[end - 1] === 0) end--;
  let start = 0;
  while (start < end && h[start] === 0) start++;
  let out = `{${(zeroRuns[start] ??= '0,'.repeat(start))}`;
  for (let i = start; i < end; i++) out += i > start ? `,${h[i]!}` : String(h[i]!);
  return `${out}}`;
}

/** The deltas as COPY text rows (numbers as String writes them: the shortest form that reads back exactly). */
export function stageRows(deltas: readonly RollupDelta[]): string {
  let out = '';
  let lastBucket = NaN;
  let bucketText = '';
  for (const d of deltas) {
    if (d.bucket !== lastBucket) {
      lastBucket = d.bucket;
      bucketText = new Date(d.bucket).toISOString();
    }
    out +=
      `${field(d.site)}\t${bucketText}\t${field(d.routeKey)}\t${field(d.country)}\t${field(d.pool)}\t` +
      `${field(d.session)}`;
    for (const [, key] of COUNT_COLUMNS) out += `\t${d[key]}`;
    out += `\t${histLiteral(d.latencyHist) ?? '\\N'}\n`;
  }
  return out;
}

/** Adds the deltas of one level to its rollup table (inside the batch's transaction). */
export async function upsertRollups(
  client: PoolClient,
  level: RollupLevel,
  deltas: readonly RollupDelta[],
): Promise<void> {
  if (deltas.length === 0) return;
  const stage = STAGE_TABLE[level];
  const stream = client.query(copyFrom(`COPY ${stage} (${COLUMNS}) FROM STDIN`));
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(Buffer.from(stageRows(deltas)));
  });
  // A temporary table filled by one COPY is read back in the order written: the deltas' sorted order,
  // which keeps the row locks of concurrent batches in one order (aggregate.ts).
  await client.query(
    `INSERT INTO ${ROLLUP_TABLE[level]} AS r (${COLUMNS})
     SELECT ${COLUMNS} FROM ${stage}
     ON CONFLICT (site, bucket, route_key) DO UPDATE SET
       ${SUMMED.map((c) => `${c} = r.${c} + EXCLUDED.${c}`).join(',\n       ')},
       latency_hist = th_hist_add(r.latency_hist, EXCLUDED.latency_hist)`,
  );
}
