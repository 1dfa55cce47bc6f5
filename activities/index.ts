/**
 * All activities, built from their dependencies (a PostgreSQL pool, a logger) so tests and the worker
 * wire them the same way. Workflow code imports only the `Activities` type.
 */
import type { Pool } from '../db/pool';
import type { Logger } from '../logging/logger';
import { makeAssessSite } from './assess-site';

export interface ActivityDeps {
  pool: Pool;
  logger: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return {
    assessSite: makeAssessSite(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { Assessment, AssessSiteInput } from './assess-site';
