/** A recorder sink writing straight into the signal store (the crawler has DATABASE_URL). */
import { createIngester } from '../db/signal-store/ingest';
import type { Pool } from '../db/pool';
import type { EventSink } from './recorder';

export function postgresSink(pool: Pool): EventSink {
  const ingester = createIngester(pool);
  return { write: ({ events, eventIds }) => ingester.ingest(events, 1, eventIds) };
}
