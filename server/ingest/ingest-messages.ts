/** Messages between `target-health ingest` and its worker threads (server/ingest/ingest-worker.ts). */
import type { RejectedLine } from '../db/signal-store/types';
import type { LargestField } from './line-fields';

export interface WorkerSettings {
  /** null: --dry-run, validate only. */
  databaseUrl: string | null;
  /** A statement (and an answer from the server) taking longer than this fails the batch: exit 3, not a hang. */
  timeoutMs: number;
  /** Waiting longer for a connection fails the batch (default 10 s). */
  connectTimeoutMs?: number;
  /**
   * Days of minute rollups kept (TARGET_HEALTH_MINUTE_DAYS;
   * server/db/signal-store/ingest.ts); absent: every minute row.
   */
  minuteDays?: number;
}

/**
 * A line the reader does not hand over as text: longer than the line limit (its bytes were not kept)
 * or not valid UTF-8 (decoding would have replaced the bad bytes with U+FFFD and stored something the
 * crawler never sent).
 */
export interface UnreadableLine {
  unreadable: 'too-long' | 'not-utf8';
  /** Size of the line in bytes. */
  bytes: number;
  /** not-utf8: byte offset of the first bad byte in the line. */
  at?: number;
  /** too-long: the top-level field holding the most bytes, when the line is a JSON object. */
  largest?: LargestField;
}

export type BatchLine = string | UnreadableLine;

export type ToWorker = { type: 'batch'; seq: number; lines: BatchLine[]; firstLine: number } | { type: 'close' };

export type BatchResult =
  | {
      type: 'done';
      seq: number;
      lines: number;
      blank: number;
      accepted: number;
      inserted: number;
      duplicates: number;
      rejected: RejectedLine[];
    }
  | { type: 'failed'; seq: number; message: string };
