/** Every route module of the API, in the order they are registered (and listed in the OpenAPI document). */
import type { RouteContext } from '../server';
import { registerOpsRoutes } from './ops';
import { registerControlsRoutes } from './controls';

export type RegisterRoutes = (ctx: RouteContext) => void | Promise<void>;

export const ROUTES: readonly RegisterRoutes[] = [registerOpsRoutes, registerControlsRoutes];
