/** The crawler-side recorder library: see README "Connect a crawler" and docs/signal-store.md. */
export { createRecorder, type Recorder, type RecorderOptions, type RecorderStats, type EventSink, type RecordedBatch } from './recorder';
export { postgresSink } from './postgres-sink';
