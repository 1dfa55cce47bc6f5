/**
 * The event inbox (migration 010): batches crawlers' `postgresSink` wrote (packages/crawler/src/postgres),
 * waiting for the drainer (server/api/inbox-drainer.ts). The server's SQL on it, in one place. A batch is taken
 * inside a transaction with `FOR UPDATE SKIP LOCKED` (several servers drain one inbox, each batch by one of
 * them at a time) and deleted in that transaction once the ingester has stored its events: a drainer that
 * dies in between leaves the row to the next one, and the ingester ignores the events already stored.
 */
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import type pg from 'pg';
import { z } from 'zod';
import { INBOX_TABLE } from '@target-health/crawler/postgres/contract';

type Queryable = Pick<pg.PoolClient, 'query'>;

export interface InboxBatch {
  batchId: string;
  /** The events as the sink wrote them: gzip of NDJSON ({@link inboxLines} reads them). */
  payload: Buffer;
  /** What the sink said it wrote (the drainer compares). */
  eventCount: number;
  receivedAt: Date;
}

const rowSchema = z.object({
  batch_id: z.string(),
  events: z.instanceof(Buffer),
  event_count: z.number().int(),
  received_at: z.date(),
});

/** The oldest batch no other transaction holds, locked until the caller's transaction ends; undefined: none. */
export async function claimInboxBatch(tx: Queryable): Promise<InboxBatch | undefined> {
  const { rows } = await tx.query<Record<string, unknown>>(
    `SELECT batch_id, events, event_count, received_at FROM ${INBOX_TABLE} ORDER BY received_at, batch_id ` +
      `LIMIT 1 FOR UPDATE SKIP LOCKED`,
  );
  if (rows[0] === undefined) return undefined;
  const row = rowSchema.parse(rows[0]);
  return { batchId: row.batch_id, payload: row.events, eventCount: row.event_count, receivedAt: row.received_at };
}

const gunzip = promisify(gunzipCallback);

/**
 * A batch's NDJSON lines (blank ones left out). Decompressed on libuv's threads, at most `maxBytes`
 * (a crawler role can insert anything: a gzip bomb fails here). Throws when the payload is not gzip,
 * too large, or not UTF-8 text — the row can never be stored.
 */
export async function inboxLines(payload: Buffer, maxBytes: number): Promise<string[]> {
  const text = await gunzip(payload, { maxOutputLength: maxBytes });
  const lines = new TextDecoder('utf-8', { fatal: true }).decode(text).split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Deletes a drained batch (in the claiming transaction); returns how long it waited, by the server's clock, in seconds.
 */
export async function deleteInboxBatch(tx: Queryable, batchId: string): Promise<number> {
  const { rows } = await tx.query<{ waited: number }>(
    `DELETE FROM ${INBOX_TABLE} WHERE batch_id = $1 RETURNING extract(epoch FROM clock_timestamp() - ` +
      `received_at)::float8 AS waited`,
    [batchId],
  );
  return rows[0]?.waited ?? 0;
}

/** What waits: batches, events, and the oldest batch's age in seconds (0 when empty). */
export async function inboxBacklog(db: Queryable): Promise<{ batches: number; events: number; oldestSeconds: number }> {
  const { rows } = await db.query<{ batches: string; events: string | null; oldest: number | null }>(
    `SELECT count(*) AS batches, sum(event_count) AS events, extract(epoch FROM clock_timestamp() - ` +
      `min(received_at))::float8 AS oldest FROM ${INBOX_TABLE}`,
  );
  const r = rows[0]!;
  return { batches: Number(r.batches), events: Number(r.events ?? 0), oldestSeconds: r.oldest ?? 0 };
}
