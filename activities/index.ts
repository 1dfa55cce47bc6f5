/**
 * All activities, built from their dependencies (a PostgreSQL pool, a logger; the notifier and the UI
 * base URL from the environment unless given) so tests and the worker wire them the same way. Workflow
 * code imports only the `Activities` type.
 */
import { loadConsoleUrl, loadNotifierSettings, loadTemporalUiUrl } from '../server/config/env';
import type { Pool } from '../server/db/pool';
import type { Logger } from '../server/logging/logger';
import { type Notifier, createNotifier } from '../server/notifications/notifier';
import { makeApplyActions } from './apply-actions';
import { type ReadWindows, makeAssessSite } from './assess-site';
import { makeCanaryActivities } from './canaries';
import { refusingBadData } from './data-errors';
import { makeDeliveryActivities } from './deliver-notification';
import { makeRecordSettingsChange } from './record-settings-change';

export interface ActivityDeps {
  pool: Pool;
  logger: Logger;
  /** Default: the structured log plus the webhooks in TARGET_HEALTH_WEBHOOK_URL / TARGET_HEALTH_SLACK_WEBHOOK_URL. */
  notifier?: Notifier;
  /**
   * Base of the links in notifications. Default: TEMPORAL_UI_URL, else the UI `npm start` serves (TEMPORAL_UI_PORT,
   * server/config/env.ts loadTemporalUiUrl); `npm start` passes the address of the UI it started, whatever its port.
   */
  uiUrl?: string;
  /**
   * Base of the console links in notifications. Default: TH_CONSOLE_PUBLIC_URL, else the API on this machine
   * (server/config/env.ts loadConsoleUrl); `npm start` passes the address its API listens on.
   */
  consoleUrl?: string;
  /** Default: the signal store's readSiteWindows. */
  readWindows?: ReadWindows;
}

export function createActivities(deps: ActivityDeps) {
  // Read the environment once, when the worker starts: a malformed webhook URL stops it with one line.
  const notifier = deps.notifier ?? createNotifier(loadNotifierSettings(), deps.logger);
  const uiUrl = deps.uiUrl ?? loadTemporalUiUrl();
  const consoleUrl = deps.consoleUrl ?? loadConsoleUrl();
  const canaries = makeCanaryActivities({ pool: deps.pool, logger: deps.logger });
  return {
    assessSite: refusingBadData(
      'the assessment',
      makeAssessSite({
        pool: deps.pool,
        logger: deps.logger,
        runDueCanaries: (input) => canaries.runDueCanaries(input),
        ...(deps.readWindows ? { readWindows: deps.readWindows } : {}),
      }),
    ),
    applyActions: makeApplyActions({ pool: deps.pool, logger: deps.logger, uiUrl, consoleUrl }),
    recordSettingsChange: makeRecordSettingsChange({ pool: deps.pool, logger: deps.logger }),
    ...makeDeliveryActivities({ pool: deps.pool, logger: deps.logger, notifier }),
    // Also callable on its own (`target-health canary run` uses the same runner).
    ...canaries,
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { AssessSiteInput, TickAssessment } from './assess-site';
export type { ApplyActionsInput, ApplyActionsResult } from './apply-actions';
export type { RecordSettingsChangeInput, RecordSettingsChangeResult } from './record-settings-change';
