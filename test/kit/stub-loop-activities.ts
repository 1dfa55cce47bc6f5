/**
 * Stub activities for the site loop on skipped time, typed from the real `Activities`: the assessment
 * scores scripted traffic with the real scoring engine at the test server's clock; the action activity
 * keeps the controls record in memory and answers like the real one (controls changed or not, their
 * version, every queued notification key); deliveries succeed. Each records its calls for assertions.
 */
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Activities, ApplyActionsInput, AssessSiteInput } from '../../activities';
import { type Controls, changedFields } from '../../core/control/controls';
import { assessmentKey } from '../../core/control/keys';
import { assess } from '../../core/scoring/assess';
import type { WindowInput } from '../../core/scoring/window';
import { BASELINE, window } from './loop-fixtures';
import { serverClock } from './time-skipping';

export type LoopActivities = Pick<
  Activities,
  'assessSite' | 'applyActions' | 'deliverNotification' | 'markNotificationFailed'
>;

/** Usual traffic: refusals as in the baseline. */
export const healthyTraffic = (): WindowInput => window(400);
/** Three quarters refused (hard blocks, challenges, soft blocks): health score 15, the resisting band. */
export const resistingTraffic = (): WindowInput => window(400, { hard: 0.25, challenge: 0.25, soft: 0.25 });

export interface ApplyCall {
  /** Test server time of the call. */
  at: number;
  /** The workflow run that called (a continued loop calls from a new run). */
  runId: string;
  input: ApplyActionsInput;
}

export interface LoopStubs {
  activities: LoopActivities;
  assessed: Array<{ at: number; runId: string; input: AssessSiteInput }>;
  applied: ApplyCall[];
  delivered: string[];
  /** The controls record as the crawler would read it. */
  controls(): Controls | null;
}

function callerRunId(): string {
  const runId = Context.current().info.workflowExecution?.runId;
  if (runId === undefined)
    throw new Error('loop stub activities run only for a workflow (no workflow execution in the activity info)');
  return runId;
}

/** `traffic` says what the site's current window looks like for each tick's assessment input. */
export function loopStubs(
  testEnv: TestWorkflowEnvironment,
  site: string,
  traffic: (input: AssessSiteInput) => WindowInput,
): LoopStubs {
  const now = serverClock(testEnv);
  const assessed: LoopStubs['assessed'] = [];
  const applied: ApplyCall[] = [];
  const delivered: string[] = [];
  let record: { controls: Controls; version: number } | null = null;
  /** The latest tick's time: a tick's actions are stamped with it (the loop reckons reminders by it). */
  let tickAt: number | null = null;

  const activities: LoopActivities = {
    assessSite(input) {
      // As the real activity: the tick's time from the workflow's schedule.
      const at = Date.parse(input.asOf);
      tickAt = at;
      assessed.push({ at, runId: callerRunId(), input });
      const assessedAt = new Date(at).toISOString();
      const baselineTo = at - input.window.excludeRecentMs;
      return Promise.resolve({
        assessmentKey: assessmentKey(input.site, input.chainId, input.tick),
        tick: input.tick,
        assessedAt,
        site: { registered: true, owner: `owner@${site}`, parserOwner: `parser@${site}` },
        window: {
          currentFrom: new Date(at - input.window.currentWindowMs).toISOString(),
          currentTo: assessedAt,
          baselineFrom: new Date(baselineTo - input.window.baselineMs).toISOString(),
          baselineTo: new Date(baselineTo).toISOString(),
        },
        assessment: assess(
          { current: traffic(input), baseline: BASELINE, previousRefusal: input.previousRefusal },
          input.scoring,
        ),
        canaries: null,
      });
    },

    async applyActions(input) {
      const at = input.actor === 'control-loop' && tickAt !== null ? tickAt : await now();
      applied.push({ at, runId: callerRunId(), input });
      let controlsChanged = false;
      if (input.controls !== null && changedFields(record?.controls ?? null, input.controls.next).length > 0) {
        record = { controls: input.controls.next, version: (record?.version ?? 0) + 1 };
        controlsChanged = true;
      }
      return {
        appliedAt: new Date(at).toISOString(),
        controlsChanged,
        controlsVersion: controlsChanged ? record!.version : null,
        notificationKeys: input.notices.map((n) => n.key),
      };
    },

    deliverNotification(input) {
      delivered.push(input.notificationKey);
      return Promise.resolve({ notificationKey: input.notificationKey, delivered: ['log'], failed: [] });
    },

    markNotificationFailed() {
      return Promise.reject(new Error('no delivery fails in these tests'));
    },
  };
  return { activities, assessed, applied, delivered, controls: () => record?.controls ?? null };
}

/** The notices of one kind the loop queued, with the server time of the action call that queued them. */
export function noticesOf(
  applied: readonly ApplyCall[],
  kind: string,
): Array<{ at: number; runId: string; key: string; title: string }> {
  return applied.flatMap((c) =>
    c.input.notices
      .filter((n) => n.draft.kind === kind)
      .map((n) => ({ at: c.at, runId: c.runId, key: n.key, title: n.draft.title })),
  );
}
