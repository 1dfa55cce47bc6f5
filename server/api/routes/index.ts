/**
 * Every route module of the API, in the order they are registered (and listed in the OpenAPI document). Route
 * modules of higher layers (the web console, client/console/) are given to `buildApi` as `extraRoutes` by the
 * processes that serve them (`target-health api`, `npm start`, the demo), after these.
 */
import type { RouteContext } from '../server';
import { registerControlsRoutes } from './controls';
import { registerDecisionRoutes } from './decisions';
import { registerEventsRoutes } from './events';
import { registerIncidentMarkRoutes } from './incident-marks';
import { registerMetricsRoutes } from './metrics';
import { registerOpenApiRoutes } from './openapi';
import { registerOpsRoutes } from './ops';
import { registerSitesRoutes } from './sites';

export type RegisterRoutes = (ctx: RouteContext) => void | Promise<void>;

// registerOpenApiRoutes first: its onRoute hook documents every route registered after it.
export const ROUTES: readonly RegisterRoutes[] = [
  registerOpenApiRoutes,
  registerOpsRoutes,
  registerEventsRoutes,
  registerControlsRoutes,
  registerSitesRoutes,
  registerDecisionRoutes,
  registerIncidentMarkRoutes,
  registerMetricsRoutes,
];
