/** A site as the sites listing has it (server/api/schemas/sites.ts): the console's fleet tests' rows. */
import type { SiteSummary } from '../../../server/api/schemas/sites';

export const row = (site: string, extra: Partial<SiteSummary> = {}): SiteSummary => ({
  site,
  workflowId: `site-health:${site}`,
  band: 'healthy',
  score: 90,
  smoothedScore: 91,
  parserHealth: 99,
  awaitingHuman: false,
  awaitingSince: null,
  problem: null,
  loopStartedAt: null,
  lastAssessedAt: null,
  lastChange: null,
  ...extra,
});
