/** The crawler-side recorder library: see README "Connect a crawler" and docs/signal-store.md. */
export { createRecorder, WriteTimeoutError, type Recorder, type RecorderOptions, type RecorderStats, type EventSink, type RecordedBatch } from './recorder';
export { postgresSink, isPermanentPostgresError, type PostgresSink, type PostgresSinkConfig } from './postgres-sink';
export type { RecorderLogger } from './report';
