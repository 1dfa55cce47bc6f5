/**
 * Keeps `npm start`'s embedded PostgreSQL running. When it dies (killed, crashed, out of memory), it is
 * started again on the same folder and port, with backoff: the worker's pool reconnects by itself and
 * its activities retry meanwhile, so ticks resume where they were. If it cannot be restarted, the
 * stack says so in one line and stops — never a loop of silent failures. Stopping the supervision (the
 * stack's stop, once the worker has drained) cancels a pending restart: nothing is started after it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../server/logging/logger';
import type { EmbeddedPostgresHandle } from './embedded-postgres';

export interface SuperviseOptions {
  /** Restart attempts before giving up (default 8: about 4 minutes with the backoff below). */
  attempts?: number;
  /** First wait before a restart; doubles each attempt, at most 60 s (default 1 s). */
  firstDelayMs?: number;
}

export interface Supervision {
  /** No more restarts: a pending one is cancelled (call before stopping the server). */
  stop(): void;
}

export function supervisePostgres(
  pg: EmbeddedPostgresHandle,
  logger: Logger,
  giveUp: (message: string) => void,
  options: SuperviseOptions = {},
): Supervision {
  const attempts = options.attempts ?? 8;
  const firstDelayMs = options.firstDelayMs ?? 1_000;
  const stopped = new AbortController();
  pg.onUnexpectedExit((how) => {
    if (stopped.signal.aborted) return;
    logger.error({ how }, 'embedded PostgreSQL exited unexpectedly; restarting it (the worker retries meanwhile)');
    void (async () => {
      let last = '';
      for (let attempt = 1; attempt <= attempts; attempt++) {
        // A killed server's backends take a moment to notice and release its shared memory.
        try {
          await sleep(Math.min(60_000, firstDelayMs * 2 ** (attempt - 1)), undefined, { signal: stopped.signal });
        } catch {
          return; // stopped meanwhile
        }
        try {
          await pg.restart();
          logger.warn({ attempt }, 'embedded PostgreSQL restarted');
          return;
        } catch (err) {
          if (stopped.signal.aborted) return;
          last = err instanceof Error ? err.message : String(err);
          logger.warn({ attempt, err: last }, 'embedded PostgreSQL did not restart yet');
        }
      }
      if (!stopped.signal.aborted)
        giveUp(
          `embedded PostgreSQL exited (${how}) and did not restart after ${attempts} attempts (${last}); ` +
            `stopping Target Health`,
        );
    })();
  });
  return { stop: () => stopped.abort() };
}
