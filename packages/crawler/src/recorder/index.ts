/**
 * `@target-health/crawler/recorder`: the crawler-side recorder and its API sink. See README "Connect a
 * crawler" and docs/signal-store.md. The PostgreSQL sink needs the server's store code (its ingester), so
 * for now it is exported by the server package (`target-health/recorder`), not from here.
 */
export {
  createRecorder,
  WriteTimeoutError,
  type Recorder,
  type RecorderOptions,
  type RecorderStats,
  type RecordOutcome,
  type EventSink,
  type RecordedBatch,
} from './recorder';
export type { RecordInput, CrawlEvent, RecordHeaderValue } from './record-input';
export { apiSink, ApiSinkError, type ApiSink, type ApiSinkConfig } from './api-sink';
export type { RecorderLogger } from './report';
export type { IngestResult, RejectedLine } from './types';
