/** Every route module of the API, in the order they are registered (and listed in the OpenAPI document). */
import type { RouteContext } from '../server';
import { registerEventsRoutes } from './events';
import { registerMetricsRoutes } from './metrics';
import { registerOpsRoutes } from './ops';

export type RegisterRoutes = (ctx: RouteContext) => void | Promise<void>;

export const ROUTES: readonly RegisterRoutes[] = [registerOpsRoutes, registerEventsRoutes, registerMetricsRoutes];
