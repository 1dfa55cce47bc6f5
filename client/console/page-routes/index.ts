/**
 * The console's page route modules, registered after sign-in, sign-out and the Fleet page (../routes.ts),
 * each with the console's guard (../guard.ts): add a page by adding its module here.
 */
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../../../server/api/server';
import type { ConsoleGuard } from '../guard';
import { registerDecideRoutes } from './decide';
import { registerFleetPage } from './fleet';
import { registerReviewPage } from './review';
import { siteRoutes } from './site';

export type ConsolePageRoutes = (app: FastifyInstance, ctx: RouteContext, guard: ConsoleGuard) => void;

export const CONSOLE_PAGE_ROUTES: readonly ConsolePageRoutes[] = [
  siteRoutes,
  registerDecideRoutes,
  registerReviewPage,
  registerFleetPage,
];
