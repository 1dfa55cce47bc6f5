/**
 * Drains the event inbox (server/db/signal-store/inbox.ts, migration 010) into the signal store: the batches
 * crawlers' `postgresSink` (`@target-health/crawler/postgres`) wrote. Runs in every API process
 * (`target-health api`, `npm start`, the compose file's `api` service), beside `POST /v1/events`, and
 * stores through the same path: the API's ingest threads when it has them, else its own ingester.
 *
 * - Woken by `NOTIFY th_event_inbox` (the inbox's trigger, one per batch), and polling every `pollMs`
 *   besides (notifications are lost while the listening connection is down, or sent before it listened).
 * - Up to `concurrency` batches at once (one runner per batch in flight; an idle poll is one query), each
 *   in its own transaction: the row is taken with `FOR UPDATE
 *   SKIP LOCKED` (other API processes drain the same inbox), its events stored by the ingester (its own
 *   transactions), then the row is deleted and the transaction committed. A process that dies in between
 *   leaves the row to the next taker; the ingester ignores the events already stored (ids): at least once
 *   into the inbox, exactly once into the store.
 * - A batch the store cannot take now (connection lost, timeout, a lost ingest thread) stays in the inbox
 *   and is tried again after a capped backoff, logged at the first failure and then once a minute.
 * - Events the ingester refuses (invalid by the server's rules — the time horizon, a field the crawler's
 *   older schema let through — or refused by PostgreSQL) are logged with the batch id and counted
 *   (`th_inbox_events_total{result="rejected"}`): the crawler's recorder had counted them as stored.
 */
import pg from 'pg';
import { retryDelayMs } from '@target-health/crawler/recorder/backoff';
import { INBOX_CHANNEL } from '@target-health/crawler/postgres/contract';
import { claimInboxBatch, deleteInboxBatch, inboxLines } from '../db/signal-store/inbox';
import type { Pool } from '../db/pool';
import { describePgError } from '../db/pool';
import type { Logger } from '../logging/logger';
import type { RejectedLine } from '../db/signal-store/types';

/** What storing a batch's lines answers (0-based lines in `rejected`, as `POST /v1/events` numbers them). */
export interface DrainResult {
  inserted: number;
  duplicates: number;
  rejected: ReadonlyArray<{ index: number; errors: readonly string[] }>;
}

/** Counters the drainer adds to (the API's registry: server/api/metrics.ts). */
export interface InboxMetrics {
  batches(result: 'drained' | 'failed'): void;
  events(result: 'inserted' | 'duplicate' | 'rejected', n: number): void;
  /** Seconds from the sink's INSERT to the batch's events stored (the server's clock). */
  waited(seconds: number): void;
}

export interface InboxDrainerOptions {
  /**
   * Whose connection settings the drainer uses: its own pool for the batches' transactions (one connection
   * per batch in flight, so they never starve the ingester of this pool), and its listening connection.
   */
  pool: Pool;
  logger: Logger;
  /**
   * Stores a batch's NDJSON lines (the ingester, or the API's ingest threads); throws when
   * the store cannot take them now.
   */
  store(lines: string[]): Promise<DrainResult>;
  metrics?: InboxMetrics;
  /** Batches drained at once (4: the ingest threads' width on two to four cores). */
  concurrency?: number;
  /** Polling interval besides the notifications (2 s). */
  pollMs?: number;
  /** Longest wait before a failed batch (or a lost listener) is tried again (10 s). */
  retryMaxMs?: number;
  /** Bytes of NDJSON a batch may decompress to (256 MiB; the sink writes at most 16 MiB a row). */
  maxBatchBytes?: number;
}

export interface InboxDrainerStatus {
  listening: boolean;
  inFlight: number;
  drained: number;
  failures: number;
}

/** The listener's `application_name` (pg_stat_activity; tests find its backend by it). */
export const DRAINER_APPLICATION_NAME = 'target-health-inbox-drainer';

export class InboxDrainer {
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly retryMaxMs: number;
  private readonly claims: pg.Pool;
  private closed = false;
  private running = 0;
  /** Bumped by every wake-up: a runner that found the inbox empty looks again if it changed meanwhile. */
  private wakes = 0;
  private listener: pg.Client | undefined;
  private listening = false;
  private listenFailures = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly runners = new Set<Promise<void>>();
  private readonly sleepers = new Set<() => void>();
  private drained = 0;
  private failures = 0;
  private lastFailureLogAt = -Infinity;

  constructor(private readonly options: InboxDrainerOptions) {
    this.concurrency = options.concurrency ?? 4;
    this.pollMs = options.pollMs ?? 2_000;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
    this.claims = new pg.Pool({
      ...options.pool.options,
      max: this.concurrency,
      application_name: DRAINER_APPLICATION_NAME,
      // A batch's row lock is not held for ever by a connection whose drainer hangs: the batch goes to the next taker.
      idle_in_transaction_session_timeout: 600_000,
    });
    // A connection lost (a restart) must not crash the server — idle in the pool, or lent out and idle in its
    // transaction while the batch is stored (pg-pool takes its own listener off a lent connection): the
    // next statement on it fails, and the batch is retried.
    this.claims.on('error', () => undefined);
    this.claims.on('connect', (client) => {
      client.on('error', () => undefined);
    });
  }

  start(): void {
    void this.listen();
    this.pollTimer = setInterval(() => this.wake(), this.pollMs);
    this.pollTimer.unref();
    this.wake();
  }

  status(): InboxDrainerStatus {
    return { listening: this.listening, inFlight: this.running, drained: this.drained, failures: this.failures };
  }

  /** Stops taking batches, waits for those in flight (their transactions commit or roll back), ends the listener. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.reconnectTimer);
    for (const wakeUp of this.sleepers) wakeUp();
    const l = this.listener;
    this.listener = undefined;
    if (l) {
      l.on('error', () => undefined);
      await l.end().catch(() => undefined);
    }
    await Promise.all(this.runners);
    await this.claims.end();
  }

  /** A notification, the poll, or the listener back: one more runner, up to `concurrency`. */
  private wake(): void {
    if (this.closed) return;
    this.wakes += 1;
    this.spawn();
  }

  private spawn(): void {
    if (this.closed || this.running >= this.concurrency) return;
    this.running += 1;
    const runner = this.run().finally(() => {
      this.running -= 1;
      this.runners.delete(runner);
    });
    this.runners.add(runner);
  }

  /**
   * Takes batches until the inbox has none left for it. An idle poll costs one runner one query; a runner
   * that found a batch starts another (a backlog is drained `concurrency` batches at a time).
   */
  private async run(): Promise<void> {
    let failed = 0;
    while (!this.closed) {
      const seen = this.wakes;
      let outcome: 'drained' | 'empty';
      try {
        outcome = await this.drainOne();
        failed = 0;
      } catch (err) {
        failed += 1;
        this.failures += 1;
        this.options.metrics?.batches('failed');
        this.logFailure(err);
        await this.sleep(retryDelayMs(failed, { initialMs: 200, maxMs: this.retryMaxMs }));
        continue;
      }
      if (outcome === 'drained') this.spawn();
      else if (this.wakes === seen) return;
    }
  }

  private async drainOne(): Promise<'drained' | 'empty'> {
    const tx = await this.claims.connect();
    let broken: Error | undefined;
    let storeFailed = false;
    try {
      await tx.query('BEGIN');
      const batch = await claimInboxBatch(tx);
      if (batch === undefined) {
        await tx.query('COMMIT');
        return 'empty';
      }
      let lines: string[];
      try {
        lines = await inboxLines(batch.payload, this.options.maxBatchBytes ?? 256 * 1024 * 1024);
      } catch (err) {
        // Not a batch any sink wrote (not gzip, too large, not UTF-8): it can never be stored. Deleted,
        // and its events counted and logged as refused — not retried for ever, not silent.
        await deleteInboxBatch(tx, batch.batchId);
        await tx.query('COMMIT');
        this.options.metrics?.batches('drained');
        this.options.metrics?.events('rejected', batch.eventCount);
        this.options.logger.error(
          {
            batchId: batch.batchId,
            eventCount: batch.eventCount,
            bytes: batch.payload.length,
            error: describePgError(err),
          },
          `inbox: batch ${batch.batchId} cannot be read (${describePgError(err)}): its ${batch.eventCount} ` +
            `events are refused and the row deleted; postgresSink writes gzip-compressed NDJSON`,
        );
        return 'drained';
      }
      let result: DrainResult;
      try {
        result = await this.options.store(lines);
      } catch (err) {
        storeFailed = true;
        throw Object.assign(
          new Error(
            `batch ${batch.batchId} (${lines.length} events) could not be stored now: ${describePgError(err)}; ` +
              `it stays in the inbox`,
          ),
          { cause: err },
        );
      }
      const waited = await deleteInboxBatch(tx, batch.batchId);
      await tx.query('COMMIT');
      this.drained += 1;
      this.report(batch.batchId, lines.length, batch.eventCount, result, waited);
      return 'drained';
    } catch (err) {
      // The batch's row lock goes with the transaction. A connection that failed mid-transaction (not
      // the store's failure, on its own connections) is not given back to the pool.
      try {
        await tx.query('ROLLBACK');
      } catch {
        broken = err instanceof Error ? err : new Error(String(err));
      }
      if (!storeFailed) broken ??= err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      tx.release(broken);
    }
  }

  private report(batchId: string, lines: number, eventCount: number, result: DrainResult, waited: number): void {
    const m = this.options.metrics;
    m?.batches('drained');
    m?.waited(waited);
    if (result.inserted > 0) m?.events('inserted', result.inserted);
    if (result.duplicates > 0) m?.events('duplicate', result.duplicates);
    if (lines !== eventCount)
      this.options.logger.warn(
        { batchId, lines, eventCount },
        `inbox: batch ${batchId} holds ${lines} lines, its writer said ${eventCount}`,
      );
    if (result.rejected.length === 0) return;
    m?.events('rejected', result.rejected.length);
    const first = result.rejected[0]!;
    const sample: RejectedLine[] = result.rejected
      .slice(0, 5)
      .map((r) => ({ line: r.index + 1, errors: [...r.errors] }));
    this.options.logger.warn(
      { batchId, rejected: result.rejected.length, stored: result.inserted + result.duplicates, sample },
      `inbox: the store refused ${result.rejected.length} of the ${lines} events of batch ${batchId} (first, ` +
        `line ${first.index + 1}: ${first.errors[0] ?? '?'}); the others are stored`,
    );
  }

  private logFailure(err: unknown): void {
    if (Date.now() - this.lastFailureLogAt < 60_000) return;
    this.lastFailureLogAt = Date.now();
    this.options.logger.warn(
      { error: describePgError(err), failures: this.failures },
      `inbox: ${describePgError(err)}; retrying (logged again in a minute if it goes on)`,
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.sleepers.add(done);
      if (this.closed) done();
    });
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const c = new pg.Client({
      ...this.options.pool.options,
      application_name: DRAINER_APPLICATION_NAME,
      keepAlive: true,
    });
    this.listener = c;
    const lost = (err?: unknown) => {
      if (this.listener !== c) return;
      this.listener = undefined;
      this.listening = false;
      c.on('error', () => undefined);
      void c.end().catch(() => undefined);
      if (this.closed) return;
      this.listenFailures += 1;
      if (this.listenFailures === 1)
        this.options.logger.warn(
          { error: err === undefined ? 'ended' : describePgError(err) },
          'inbox: lost the notification connection; polling every %d ms until it is back',
          this.pollMs,
        );
      this.reconnectTimer = setTimeout(
        () => void this.listen(),
        retryDelayMs(this.listenFailures, { initialMs: 250, maxMs: this.retryMaxMs }),
      );
      this.reconnectTimer.unref();
    };
    c.on('error', (err) => lost(err));
    c.on('end', () => lost());
    c.on('notification', (msg) => {
      if (msg.channel === INBOX_CHANNEL) this.wake();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${INBOX_CHANNEL}`);
      if (this.listener !== c) return;
      this.listening = true;
      this.listenFailures = 0;
      // Batches written before the LISTEN took effect.
      this.wake();
    } catch (err) {
      lost(err);
    }
  }
}
