/** The crawler-side recorder library: see README "Connect a crawler" and docs/signal-store.md. */
export { createRecorder, WriteTimeoutError, type Recorder, type RecorderOptions, type RecorderStats, type RecordOutcome, type EventSink, type RecordedBatch } from './recorder';
export type { RecordInput, CrawlEvent, RecordHeaderValue } from './record-input';
export { postgresSink, isPermanentPostgresError, type PostgresSink, type PostgresSinkConfig } from './postgres-sink';
export { apiSink, ApiSinkError, type ApiSink, type ApiSinkConfig } from './api-sink';
export type { RecorderLogger } from './report';
export type { IngestResult, RejectedLine } from '../db/signal-store/types';
