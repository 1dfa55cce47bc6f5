/**
 * The signal store: request outcomes in, windows out. See docs/signal-store.md.
 */
import type { Pool } from '../pool';
import { createIngester, type Ingester } from './ingest';
import type { IngestResult } from './types';

export {
  createIngester,
  parseBatch,
  isDataError,
  type Ingester,
  type IngesterOptions,
  type StoreResult,
} from './ingest';
export { DEFAULT_CARDINALITY_CAPS, type CardinalityCaps } from './cardinality';
export { derivedEventId } from './derived-id';
export { readSiteWindows, windowBounds } from './read-windows';
export { applyRetention, retentionPolicySchema, type RetentionPolicy } from './retention';
export { listPartitions, ensurePartitions, forgetKnownPartitions } from './partitions';
export * from './types';

const ingesters = new WeakMap<Pool, Ingester>();

/** Validates, classifies and stores events through one cached ingester per pool. */
export async function ingestEvents(pool: Pool, events: readonly unknown[]): Promise<IngestResult> {
  let ingester = ingesters.get(pool);
  if (!ingester) {
    ingester = createIngester(pool);
    ingesters.set(pool, ingester);
  }
  return ingester.ingest(events);
}
