/**
 * `target-health/controls` — deprecated: import `@target-health/crawler/controls` (the SSE client) and
 * `@target-health/crawler/postgres` (the PostgreSQL LISTEN client) instead. Kept as a re-export of both
 * so crawlers importing the server package keep working.
 */
export * from '@target-health/crawler/controls';
export { createPostgresControlsClient, type PostgresControlsClientOptions } from '@target-health/crawler/postgres';
