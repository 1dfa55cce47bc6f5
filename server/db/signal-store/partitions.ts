/**
 * Time partitions of the signal store. Every table is range-partitioned on its time column; ingestion
 * creates the partitions a batch needs, retention drops whole partitions (cheap, no table bloat, no
 * long DELETEs). Partition names carry their start: `<table>_p<YYYYMMDD>`.
 *
 * Partitions are created by the database function `th_ensure_partition` (migration 005), which runs
 * with the tables' owner's rights and computes name and bounds itself: so whoever ingests — the worker,
 * `target-health ingest`, a crawler's `postgresSink` — needs no DDL rights, only EXECUTE on it
 * (docs/security.md, "A least-privilege role for crawlers").
 */
import type { PoolClient } from 'pg';
import type { Pool } from '../pool';

export type Granularity = 'day' | 'month' | 'year';

/** Each partitioned table and the span of one partition. */
export const PARTITIONED_TABLES = {
  request_events: 'day',
  rollup_minute: 'day',
  rollup_hour: 'month',
  rollup_day: 'year',
  page_norms_day: 'month',
} as const satisfies Record<string, Granularity>;

export type PartitionedTable = keyof typeof PARTITIONED_TABLES;

export function partitionStart(granularity: Granularity, t: number): Date {
  const d = new Date(t);
  if (granularity === 'day') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  if (granularity === 'month') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  return new Date(Date.UTC(d.getUTCFullYear(), 0, 1));
}

export function partitionEnd(granularity: Granularity, start: Date): Date {
  const y = start.getUTCFullYear();
  const m = start.getUTCMonth();
  if (granularity === 'day') return new Date(Date.UTC(y, m, start.getUTCDate() + 1));
  if (granularity === 'month') return new Date(Date.UTC(y, m + 1, 1));
  return new Date(Date.UTC(y + 1, 0, 1));
}

function ymd(d: Date): string {
  return d.toISOString().slice(0, 10).replace(/-/g, '');
}

export function partitionName(table: PartitionedTable, start: Date): string {
  return `${table}_p${ymd(start)}`;
}

/** Partitions known to exist, per process: the common case costs no query at all. */
const known = new Set<string>();

/**
 * Creates the partitions of `table` covering the given instants (epoch ms). Concurrent ingesters may
 * race to create the same partition, so creation is serialised by an advisory lock and re-checked.
 */
export async function ensurePartitions(pool: Pool, table: PartitionedTable, instants: Iterable<number>): Promise<void> {
  const granularity = PARTITIONED_TABLES[table];
  const missing = new Map<string, Date>();
  for (const t of instants) {
    const start = partitionStart(granularity, t);
    const name = partitionName(table, start);
    if (!known.has(name)) missing.set(name, start);
  }
  if (missing.size === 0) return;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('target-health:partitions'))");
    for (const [name, start] of missing) {
      const { rows } = await client.query<{ created: string }>('SELECT th_ensure_partition($1, $2) AS created', [
        table,
        start,
      ]);
      // The function computes the name itself: a different one means the two span tables disagree.
      if (rows[0]?.created !== name)
        throw new Error(
          `th_ensure_partition made ${rows[0]?.created ?? 'nothing'} where ${name} was expected; the span of ` +
            `${table} differs between partitions.ts and the database`,
        );
    }
    await client.query('COMMIT');
    for (const name of missing.keys()) known.add(name);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw withGrantHint(err);
  } finally {
    client.release();
  }
}

/** A role without EXECUTE on the function gets the grant it lacks named (the SQLSTATE stays: 42501). */
function withGrantHint(err: unknown): unknown {
  if ((err as { code?: unknown } | null)?.code !== '42501') return err;
  const message = err instanceof Error ? err.message : String(err);
  return Object.assign(
    new Error(
      `${message}: this database role may not create the signal store's daily partitions; grant it EXECUTE ON ` +
        `FUNCTION th_ensure_partition(text, timestamptz) (docs/security.md)`,
    ),
    { code: '42501' },
  );
}

export interface PartitionInfo {
  table: PartitionedTable;
  name: string;
  start: Date;
  end: Date;
}

export async function listPartitions(db: Pool | PoolClient, table: PartitionedTable): Promise<PartitionInfo[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = $1 ORDER BY c.relname`,
    [table],
  );
  const granularity = PARTITIONED_TABLES[table];
  return rows.flatMap(({ name }) => {
    const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
    if (!m) return [];
    const start = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    return [{ table, name, start, end: partitionEnd(granularity, start) }];
  });
}

/** Drops the partitions of `table` that end at or before `cutoff`; returns their names. */
export async function dropPartitionsBefore(
  pool: Pool,
  table: PartitionedTable,
  cutoff: Date,
  dryRun = false,
): Promise<string[]> {
  const expired = (await listPartitions(pool, table)).filter((p) => p.end.getTime() <= cutoff.getTime());
  for (const p of expired) {
    if (!dryRun) {
      await pool.query(`DROP TABLE IF EXISTS ${p.name}`);
      known.delete(p.name);
    }
  }
  return expired.map((p) => p.name);
}

/** Forget what this process believes exists (tests that drop tables behind its back). */
export function forgetKnownPartitions(): void {
  known.clear();
}
