/**
 * `target-health/recorder`: the crawler package's recorder (`@target-health/crawler/recorder`) plus the
 * PostgreSQL sink, which stays in the server for now because it runs the store's own ingester.
 */
export * from '@target-health/crawler/recorder';
export { postgresSink, isPermanentPostgresError, type PostgresSink, type PostgresSinkConfig } from './postgres-sink';
