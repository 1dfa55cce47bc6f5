/**
 * `target-health/controls`: the crawler package's controls client (`@target-health/crawler/controls`)
 * plus the PostgreSQL LISTEN client, which stays in the server for now because it reads `site_controls`
 * through the server's db/controls code.
 */
export * from '@target-health/crawler/controls';
export { createPostgresControlsClient, type PostgresControlsClientOptions } from './postgres-client';
