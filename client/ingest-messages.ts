/** Messages between `target-health ingest` and its worker threads (client/ingest-worker.ts). */
import type { RejectedLine } from '../db/signal-store/types';

export interface WorkerSettings {
  /** null: --dry-run, validate only. */
  databaseUrl: string | null;
}

export type ToWorker = { type: 'batch'; seq: number; lines: string[]; firstLine: number } | { type: 'close' };

export type BatchResult =
  | { type: 'done'; seq: number; lines: number; blank: number; accepted: number; inserted: number; duplicates: number; rejected: RejectedLine[] }
  | { type: 'failed'; seq: number; message: string };
