/**
 * `@target-health/crawler/controls`: keeps the last known controls of every site current over the API's
 * SSE stream and answers `controlsFor(site)`. See docs/crawlers-library.md. The PostgreSQL LISTEN client
 * reads the server's `site_controls` code, so for now it is exported by the server package
 * (`target-health/controls`), not from here.
 */
export type { ControlsView, SiteControls, HealthBand } from './types';
export {
  ControlsClientError,
  pausedUnknown,
  type ControlsClient,
  type ControlsClientStatus,
  type UnknownSitePolicy,
} from './controls-state';
export { createControlsClient, type ControlsClientOptions } from './sse-client';
