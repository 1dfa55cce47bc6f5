/**
 * The per-tick assessment activity. Walking skeleton: it reads the site's registration and its
 * assessment history from PostgreSQL and records this tick. The scoring engine and the signal store
 * fill in the result later; the shape (one idempotent activity per tick, keyed by the workflow chain
 * and tick number) is the one the control loop keeps.
 */
import { assessmentKey } from '../common/assessment-key';
import { countAssessments, recordAssessmentOnce } from '../db/assessments';
import type { Pool } from '../db/pool';
import { findSite } from '../db/sites';
import type { Logger } from '../logging/logger';

export interface AssessSiteInput {
  site: string;
  workflowId: string;
  /** First run id of the workflow chain: stable across continue-as-new, so keys stay unique. */
  chainId: string;
  tick: number;
}

export interface Assessment {
  assessmentKey: string;
  tick: number;
  /** Database time of the assessment (ISO-8601): the workflow's clock for smoothing. */
  assessedAt: string;
  site: { registered: boolean; owner: string | null };
  /** Assessments recorded for this site before this one. */
  previousAssessments: number;
}

export function makeAssessSite(deps: { pool: Pool; logger: Logger }) {
  return async function assessSite(input: AssessSiteInput): Promise<Assessment> {
    const key = assessmentKey(input.site, input.chainId, input.tick);
    const site = await findSite(deps.pool, input.site);
    const previous = await countAssessments(deps.pool, input.site);
    const draft = { site: { registered: site !== undefined, owner: site?.owner ?? null }, previousAssessments: previous };
    // At-least-once delivery: a retry after a crash finds the first attempt's row and returns it.
    const stored = await recordAssessmentOnce(deps.pool, { assessmentKey: key, site: input.site, workflowId: input.workflowId, tick: input.tick, result: draft });
    deps.logger.debug({ site: input.site, tick: input.tick, inserted: stored.inserted }, 'assessed site');
    return { assessmentKey: key, tick: input.tick, assessedAt: stored.assessedAt.toISOString(), ...stored.result };
  };
}
