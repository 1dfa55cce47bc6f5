/**
 * The canary activity. The control loop calls `runDueCanaries` every tick — also while the site is
 * paused, which is when canaries matter most: they tell the person deciding whether the site has calmed
 * down. Safe to call every tick and to retry: canaries run once per schedule slot and each run is
 * recorded once (core/canaries/schedule.ts). Its fetches are also stored in the signal store as request
 * outcomes (canary: true; repeats are ignored by event id), so while a site is paused the canary traffic
 * is what the loop keeps assessing. It returns the window input, the evidence and those events.
 */
import { asyncLocalStorage } from '@temporalio/activity';
import { z } from 'zod';
import {
  type CanaryRunnerDeps,
  runDueCanaries as runDue,
  type RunDueCanariesResult,
} from '../server/canary-runner/runner';
import { type CanarySettings, loadCanarySettings } from '../server/canary-runner/settings';
import type { Pool } from '../server/db/pool';
import { ingestEvents } from '../server/db/signal-store';
import type { Logger } from '../server/logging/logger';
import type { SiteClassifierConfigInput } from '@target-health/crawler/events/config';

export type { RunDueCanariesResult } from '../server/canary-runner/runner';
export type { CanaryRunSummary } from '../core/canaries/types';
export type { CanaryEvidence } from '../core/canaries/latest';

const AS_OF_HELP = 'asOf: must be an ISO-8601 time with a zone or epoch milliseconds';
export const runDueCanariesInputSchema = z.strictObject({
  site: z.string().min(1, 'site: must be a normalised host like shop.example.com'),
  /** The tick's time; default: the database clock. ISO-8601 or epoch milliseconds. */
  asOf: z
    .union(
      [
        z.iso.datetime({ offset: true, error: AS_OF_HELP }),
        z.number({ error: AS_OF_HELP }).int(AS_OF_HELP).min(0, AS_OF_HELP),
      ],
      AS_OF_HELP,
    )
    .optional(),
});
export type RunDueCanariesInput = z.input<typeof runDueCanariesInputSchema>;

export interface CanaryActivityDeps {
  pool: Pool;
  logger: Logger;
  /** Default: read from the environment once, when the activities are created (a bad value stops the worker). */
  settings?: CanarySettings;
  classifierConfig?: (site: string) => Promise<SiteClassifierConfigInput | undefined>;
  /** Extra trusted CA (PEM) for canary fetches. */
  ca?: string;
}

export function makeCanaryActivities(deps: CanaryActivityDeps) {
  const settings = deps.settings ?? loadCanarySettings();
  return {
    async runDueCanaries(input: RunDueCanariesInput): Promise<RunDueCanariesResult> {
      const parsed = runDueCanariesInputSchema.safeParse(input);
      if (!parsed.success)
        throw new TypeError(`runDueCanaries: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
      const context = asyncLocalStorage.getStore();
      const runner: CanaryRunnerDeps = { pool: deps.pool, logger: deps.logger, settings };
      if (deps.classifierConfig) runner.classifierConfig = deps.classifierConfig;
      if (deps.ca !== undefined) runner.ca = deps.ca;
      if (context) {
        runner.signal = context.cancellationSignal;
        // Progress heartbeats only as an activity of its own (`target-health canary run`'s path, or a
        // worker scheduling it): inside the tick's assessment — a local activity — the server has no
        // record to heartbeat to, so each one was refused (`Activity heartbeat failed … UnknownActivity`,
        // logged by the worker after every canary of every tick). A local activity's deadline is its
        // start-to-close timeout, which needs no heartbeat.
        if (!context.info.isLocal) runner.onProgress = () => context.heartbeat();
      }
      const asOf = parsed.data.asOf === undefined ? undefined : new Date(parsed.data.asOf);
      const result = await runDue(runner, parsed.data.site, asOf);
      if (result.events.length > 0) await ingestEvents(deps.pool, result.events);
      return result;
    },
  };
}

export type CanaryActivities = ReturnType<typeof makeCanaryActivities>;
