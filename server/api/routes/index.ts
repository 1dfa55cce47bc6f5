/** Every route module of the API, in the order they are registered (and listed in the OpenAPI document). */
import type { RouteContext } from '../server';
import { registerControlsRoutes } from './controls';
import { registerDecisionRoutes } from './decisions';
import { registerEventsRoutes } from './events';
import { registerMetricsRoutes } from './metrics';
import { registerOpenApiRoutes } from './openapi';
import { registerOpsRoutes } from './ops';
import { registerSitesRoutes } from './sites';
import { registerConsoleRoutes } from '../../console/routes';

export type RegisterRoutes = (ctx: RouteContext) => void | Promise<void>;

// registerOpenApiRoutes first: its onRoute hook documents every route registered after it.
export const ROUTES: readonly RegisterRoutes[] = [
  registerOpenApiRoutes,
  registerOpsRoutes,
  registerEventsRoutes,
  registerControlsRoutes,
  registerSitesRoutes,
  registerDecisionRoutes,
  registerMetricsRoutes,
  registerConsoleRoutes,
];
