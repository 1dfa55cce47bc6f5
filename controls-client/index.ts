/**
 * The crawler-side controls client (`target-health/controls`): keeps the last known controls of every
 * site current — over the API's SSE stream, or PostgreSQL LISTEN when the crawler shares the database —
 * and answers `controlsFor(site)`. See docs/crawlers-library.md.
 */
export type { ControlsView, SiteControls, HealthBand } from './types';
export { ControlsClientError, pausedUnknown, type ControlsClient, type ControlsClientStatus, type UnknownSitePolicy } from './controls-state';
export { createControlsClient, type ControlsClientOptions } from './sse-client';
export { createPostgresControlsClient, type PostgresControlsClientOptions } from './postgres-client';
