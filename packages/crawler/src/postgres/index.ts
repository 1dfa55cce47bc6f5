/**
 * `@target-health/crawler/postgres`: for a crawler that has the database's address rather than an API
 * token. `postgresSink` writes the recorder's batches to the server's inbox; `createPostgresControlsClient`
 * follows the controls over LISTEN/NOTIFY. Needs the `pg` package (an optional peer dependency: the other
 * subpaths never load it). The database objects they use, and the rights a crawler's role needs:
 * contract.ts, docs/security.md "A least-privilege role for crawlers".
 */
export {
  postgresSink,
  isPermanentPostgresError,
  inboxBatchId,
  type PostgresSink,
  type PostgresSinkConfig,
  type PostgresSinkOptions,
} from './sink';
export { createPostgresControlsClient, type PostgresControlsClientOptions } from './controls-client';
export { INBOX_TABLE, INBOX_CHANNEL, CONTROLS_VIEW, CONTROLS_CHANNEL } from './contract';
