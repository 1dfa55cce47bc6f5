/** Every route module of the API, in the order they are registered (and listed in the OpenAPI document). */
import type { RouteContext } from '../server';
import { registerOpsRoutes } from './ops';
import { registerOpenApiRoutes } from './openapi';
import { registerSitesRoutes } from './sites';
import { registerDecisionRoutes } from './decisions';

export type RegisterRoutes = (ctx: RouteContext) => void | Promise<void>;

// registerOpenApiRoutes first: its onRoute hook documents every route registered after it.
export const ROUTES: readonly RegisterRoutes[] = [
  registerOpenApiRoutes,
  registerOpsRoutes,
  registerSitesRoutes, registerDecisionRoutes,
];
