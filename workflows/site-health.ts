/**
 * The durable per-site control loop (`site-health:<site>`). Walking skeleton: on each tick it runs
 * one assessment activity against PostgreSQL, keeps the result in workflow state, and tells the
 * Temporal UI where the site stands (search attributes, current details). Later stages add scoring,
 * band actions and the human gate on the same loop.
 */
import {
  ApplicationFailure,
  continueAsNew,
  defineQuery,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities, Assessment } from '../activities';
import type { HealthBand as Band } from '../common/names';
import { AwaitingHuman, HealthBand, TargetSite } from '../common/search-attributes';
import { siteHealthInputSchema, type SiteHealthConfig, type SiteHealthInput } from './site-health-input';

export interface SiteHealthState {
  site: string;
  band: Band;
  tick: number;
  tickIntervalMs: number;
  lastAssessment?: Assessment;
}

export const stateQuery = defineQuery<SiteHealthState>('state');

const { assessSite } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

function parseInput(input: SiteHealthInput): SiteHealthConfig {
  const parsed = siteHealthInputSchema.safeParse(input);
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`invalid siteHealth input: ${message}`, 'InvalidInput');
  }
  return parsed.data;
}

function detailsMarkdown(state: SiteHealthState): string {
  const a = state.lastAssessment;
  return [
    `| site | band | tick | last assessed |`,
    `|---|---|---|---|`,
    `| ${state.site} | ${state.band} | ${state.tick} | ${a ? a.assessedAt : 'not yet'} |`,
  ].join('\n');
}

export async function siteHealth(input: SiteHealthInput): Promise<void> {
  const config = parseInput(input);
  const info = workflowInfo();
  const chainId = config.carried?.chainId ?? info.firstExecutionRunId;
  const state: SiteHealthState = {
    site: config.site,
    band: 'learning',
    tick: config.carried?.tick ?? 0,
    tickIntervalMs: config.tickIntervalMs,
  };
  setHandler(stateQuery, () => state);

  let ticksThisRun = 0;
  for (;;) {
    state.tick += 1;
    ticksThisRun += 1;
    state.lastAssessment = await assessSite.executeWithOptions(
      { startToCloseTimeout: '30 seconds', summary: `assess ${config.site}, tick ${state.tick}` },
      [{ site: config.site, workflowId: info.workflowId, chainId, tick: state.tick }],
    );
    upsertSearchAttributes([
      { key: TargetSite, value: config.site },
      { key: HealthBand, value: state.band },
      { key: AwaitingHuman, value: false },
    ]);
    setCurrentDetails(detailsMarkdown(state));

    if (workflowInfo().continueAsNewSuggested || ticksThisRun >= config.maxTicksPerRun) {
      await continueAsNew<typeof siteHealth>({ ...input, carried: { tick: state.tick, chainId } });
    }
    // A timer, not a loop of sleeps inside an activity: the wait is durable and visible in the UI.
    await sleep(config.tickIntervalMs, { summary: 'wait for the next tick' });
  }
}
