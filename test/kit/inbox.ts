/**
 * The server's inbox drainer (server/api/inbox-drainer.ts) for tests that record through `postgresSink`: the real
 * drainer, storing with an in-process ingester (as the API does without ingest threads), and a wait for the
 * inbox to be empty — "stored" for the recorder is "in the inbox"; the store has the events once drained.
 */
import { InboxDrainer, type DrainResult } from '../../server/api/inbox-drainer';
import { ingestBody } from '../../server/api/events-batch';
import { createIngester } from '../../server/db/signal-store/ingest';
import { inboxBacklog } from '../../server/db/signal-store/inbox';
import type { Pool } from '../../server/db/pool';
import { createLogger } from '../../server/logging/logger';

export interface TestDrainer {
  drainer: InboxDrainer;
  /** Every batch's result, with its wait (s). */
  results: Array<DrainResult & { batchId?: string }>;
  waits: number[];
  /** Resolves once the inbox is empty and no batch is in flight; rejects after `timeoutMs`. */
  drained(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export function startTestDrainer(pool: Pool, options: { pollMs?: number; retryMaxMs?: number } = {}): TestDrainer {
  const ingester = createIngester(pool, { minuteDays: 3 });
  const results: TestDrainer['results'] = [];
  const waits: number[] = [];
  const drainer = new InboxDrainer({
    pool,
    logger: createLogger('silent', 'test-inbox'),
    store: async (lines) => {
      const r = await ingestBody(ingester, { lines }, Date.now());
      results.push(r);
      return r;
    },
    metrics: { batches: () => undefined, events: () => undefined, waited: (s) => waits.push(s) },
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.retryMaxMs === undefined ? {} : { retryMaxMs: options.retryMaxMs }),
  });
  drainer.start();
  return {
    drainer,
    results,
    waits,
    async drained(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const backlog = await inboxBacklog(pool).catch(() => undefined);
        if (backlog !== undefined && backlog.batches === 0 && drainer.status().inFlight === 0) return;
        if (Date.now() > until)
          throw new Error(
            `the inbox is not empty after ${timeoutMs} ms (${JSON.stringify(backlog)}, ` +
              `${JSON.stringify(drainer.status())})`,
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => drainer.close(),
  };
}
