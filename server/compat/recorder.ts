/**
 * `target-health/recorder` — deprecated: import `@target-health/crawler/recorder` (the recorder, the API
 * sink) and `@target-health/crawler/postgres` (the PostgreSQL sink) instead. Kept as a re-export of both
 * so crawlers importing the server package keep working.
 */
export * from '@target-health/crawler/recorder';
export {
  postgresSink,
  isPermanentPostgresError,
  type PostgresSink,
  type PostgresSinkConfig,
  type PostgresSinkOptions,
} from '@target-health/crawler/postgres';
