/** Shared pieces of the benchmarks: a private embedded PostgreSQL, timing, and printing. */
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateUp } from '../../server/db/migrate';
import { ingestEvents } from '../../server/db/signal-store';
import { createPool, type Pool } from '../../server/db/pool';
import { startEmbeddedPostgres } from '../../stack/embedded-postgres';
import { freePort } from '../../stack/free-port';

export interface BenchDb {
  pool: Pool;
  databaseUrl: string;
  dir: string;
  stop(): Promise<void>;
}

/** A fresh, migrated embedded PostgreSQL with the settings `npm start` uses (figures a user would see). */
export async function startBenchDb(): Promise<BenchDb> {
  const dir = mkdtempSync(join(tmpdir(), 'th-bench-'));
  chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: join(dir, 'pg'), port: await freePort(), persistent: false });
  await migrateUp(pg.databaseUrl);
  const pool = createPool(pg.databaseUrl, 8);
  return {
    pool,
    databaseUrl: pg.databaseUrl,
    dir,
    stop: async () => {
      await pool.end();
      await pg.stop();
    },
  };
}

export function seconds(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e9;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(q * s.length) - 1)]!;
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function line(label: string, value: string): void {
  process.stdout.write(`  ${label.padEnd(58)} ${value}\n`);
}

export function heading(text: string): void {
  process.stdout.write(`\n${text}\n${'-'.repeat(text.length)}\n`);
}

/** Ingests events through the product's ingest path in batches of `batchSize`; returns how many. */
export async function ingestInBatches(pool: Pool, events: Iterable<unknown>, batchSize = 5_000): Promise<number> {
  let batch: unknown[] = [];
  let count = 0;
  for (const e of events) {
    batch.push(e);
    if (batch.length === batchSize) {
      await ingestEvents(pool, batch);
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) await ingestEvents(pool, batch);
  return count + batch.length;
}
