/**
 * The per-tick assessment activity: read the site's current and baseline windows from the signal
 * store, score them (scoring/assess.ts: health score, parser health, cost drift, route diagnosis, total
 * refusal), and record the result once in the `assessments` history, keyed by site, workflow chain and
 * tick. A retry (the worker died, the reply got lost) finds the row and returns it unchanged — so a
 * tick is assessed exactly once, at one database time, however often the activity runs.
 */
import { assessmentKey } from '../control/keys';
import { recordAssessmentOnce, findAssessment } from '../db/assessments';
import type { Pool } from '../db/pool';
import { readSiteWindows } from '../db/signal-store';
import type { SiteWindows, WindowSpec } from '../db/signal-store/types';
import { findSite } from '../db/sites';
import type { Logger } from '../logging/logger';
import { assess } from '../scoring/assess';
import type { ScoringConfig } from '../scoring/config';
import type { RunDueCanariesInput, RunDueCanariesResult } from './canaries';
import { canaryFailedDays } from '../db/canaries';
import { windowBounds } from '../db/signal-store';
import type { TickAssessment } from '../control/tick-assessment';
import type { SiteHealthConfig } from '../control/config';

export type { TickAssessment } from '../control/tick-assessment';

export interface AssessSiteInput {
  site: string;
  workflowId: string;
  /** First run id of the workflow chain: stable across continue-as-new, so keys stay unique. */
  chainId: string;
  tick: number;
  window: SiteHealthConfig['window'];
  scoring: ScoringConfig;
  /** The previous tick's total-refusal streak. */
  previousRefusal: number;
  /** After a resume, only traffic from the decision on is judged (ISO time), else null. */
  evidenceSince: string | null;
}

/** The stored row's `result`: everything but the key, tick and time (columns of their own). */
type StoredResult = Omit<TickAssessment, 'assessmentKey' | 'tick' | 'assessedAt'>;

export type ReadWindows = (pool: Pool, site: string, spec: WindowSpec & { excludeDays?: readonly string[] }) => Promise<SiteWindows>;

export interface AssessSiteDeps {
  pool: Pool;
  logger: Logger;
  /** The signal store's read (tests may wrap it to observe or delay a tick). */
  readWindows?: ReadWindows;
  /** Runs the site's due canaries (activities/canaries.ts); absent: no canaries. */
  runDueCanaries?: (input: RunDueCanariesInput) => Promise<RunDueCanariesResult>;
}

/** The current window's length: the configured one, or since the decision that resumed the site. */
export function currentWindowMs(configured: number, asOf: Date, evidenceSince: string | null): number {
  if (evidenceSince === null) return configured;
  const since = asOf.getTime() - Date.parse(evidenceSince);
  return Math.max(1, Math.min(configured, since));
}

export function makeAssessSite(deps: AssessSiteDeps) {
  const readWindows = deps.readWindows ?? readSiteWindows;
  return async function assessSite(input: AssessSiteInput): Promise<TickAssessment> {
    const key = assessmentKey(input.site, input.chainId, input.tick);
    const existing = await findAssessment<StoredResult>(deps.pool, key);
    if (existing) {
      deps.logger.info({ site: input.site, tick: input.tick, assessmentKey: key }, 'assessment already recorded (activity retried): returning it');
      return { assessmentKey: key, tick: input.tick, assessedAt: existing.assessedAt.toISOString(), ...existing.result };
    }
    const { rows } = await deps.pool.query<{ now: Date }>('SELECT now() AS now');
    const asOf = rows[0]!.now;
    const spec: WindowSpec = {
      asOf,
      currentWindowMs: currentWindowMs(input.window.currentWindowMs, asOf, input.evidenceSince),
      baselineMs: input.window.baselineMs,
      excludeRecentMs: input.window.excludeRecentMs,
    };
    // Canaries first, on every tick whatever the band (also while paused: then they are the traffic
    // the loop keeps judging). Idempotent per schedule slot, so a retried tick fetches nothing twice.
    const ran = deps.runDueCanaries ? await deps.runDueCanaries({ site: input.site, asOf: asOf.toISOString() }) : null;
    const canaries = ran && ran.canaries > 0 ? { window: ran.window, evidence: ran.evidence, nextDueAt: ran.nextDueAt } : null;
    // Baseline trust: days on which canaries failed are left out of the baseline (docs/canaries.md).
    const bounds = windowBounds(spec);
    const excludeDays = canaries ? await canaryFailedDays(deps.pool, input.site, bounds.baseline.from, bounds.baseline.to) : [];
    const [windows, site] = await Promise.all([readWindows(deps.pool, input.site, { ...spec, excludeDays }), findSite(deps.pool, input.site)]);
    // The canary block comes from the canary runs themselves (mismatches are not visible in traffic).
    const current = canaries ? { ...windows.current, canary: canaries.window } : windows.current;
    const assessment = assess({ current, baseline: windows.baseline, previousRefusal: input.previousRefusal }, input.scoring);
    const result: StoredResult = {
      site: { registered: site !== undefined, owner: site?.owner ?? null, parserOwner: site?.parserOwner ?? null },
      window: {
        currentFrom: windows.bounds.current.from.toISOString(),
        currentTo: windows.bounds.current.to.toISOString(),
        baselineFrom: windows.bounds.baseline.from.toISOString(),
        baselineTo: windows.bounds.baseline.to.toISOString(),
      },
      assessment,
      canaries: canaries ? { ...canaries, excludedBaselineDays: excludeDays } : null,
    };
    // Written once; if a concurrent attempt got there first, its row wins and is returned.
    const stored = await recordAssessmentOnce(deps.pool, { assessmentKey: key, site: input.site, workflowId: input.workflowId, chainId: input.chainId, tick: input.tick, assessedAt: asOf, result });
    deps.logger.debug({ site: input.site, tick: input.tick, score: assessment.health.score, state: assessment.state, inserted: stored.inserted }, 'assessed site');
    return { assessmentKey: key, tick: input.tick, assessedAt: stored.assessedAt.toISOString(), ...stored.result };
  };
}
