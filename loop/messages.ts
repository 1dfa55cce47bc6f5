/**
 * The message contract of the per-site loop: its workflow types, the queries, signals and updates it
 * answers, their payloads and results, and the error types it throws. Clients (the CLI, tests, the
 * coming API) use these definitions — never string names — so renaming a message breaks compilation,
 * not production. Importing this file pulls in no workflow code: only the definitions
 * (`@temporalio/workflow`'s define* functions are plain constructors, safe in any Node process).
 *
 * The worker's workflow index checks at compile time that the registered workflows match
 * `SiteHealthWorkflow` and `DeliverNotificationWorkflow` under these names.
 */
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { HealthBand } from '../core/common/names';
import type { SiteHealthConfig, SiteHealthInput } from '../core/control/config';
import type { Controls } from '../core/control/controls';
import type { DecisionKind, PauseInput, ResumeInput, StopInput } from '../core/control/decisions';
import type { ConfigureInput, ConfigureResult } from '../core/control/settings-change';
import type { AwaitingHuman, DecisionSummary, LoopProblem, LoopState, TickSummary } from '../core/control/loop-state';
import type { TickAssessment } from '../core/control/tick-assessment';

export type { SiteHealthInput } from '../core/control/config';
export {
  DECISION_KINDS,
  type DecisionKind,
  type PauseInput,
  type ResumeInput,
  type StopInput,
} from '../core/control/decisions';
export type { TickSummary } from '../core/control/loop-state';
export {
  type ConfigureInput,
  type ConfigureResult,
  type SettingChange,
  configurePayloadSchema,
} from '../core/control/settings-change';

// --- Workflow types ------------------------------------------------------------------------------

/** Workflow type of the per-site loop (workflow id `site-health:<site>`, core/common/names.ts). */
export const SITE_HEALTH_WORKFLOW = 'siteHealth';
/** Workflow type of one notification's delivery (workflow id `notify:<key>`, core/control/keys.ts). */
export const DELIVER_NOTIFICATION_WORKFLOW = 'deliverNotification';

export type SiteHealthWorkflow = (input: SiteHealthInput) => Promise<SiteHealthSummary>;
export type DeliverNotificationWorkflow = (input: DeliverNotificationInput) => Promise<DeliveryReport>;

/** What the worker must register, by workflow type (checked in workflows/index.ts). */
export interface WorkflowTypes {
  [SITE_HEALTH_WORKFLOW]: SiteHealthWorkflow;
  [DELIVER_NOTIFICATION_WORKFLOW]: DeliverNotificationWorkflow;
}

// --- Results -------------------------------------------------------------------------------------

/** What `state` answers: where the site stands, its controls, and whether it waits for a person. */
export interface SiteHealthState {
  site: string;
  chainId: string;
  runs: number;
  tick: number;
  tickIntervalMs: number;
  band: HealthBand;
  scoredBand: HealthBand;
  score: number | null;
  smoothedScore: number | null;
  /** Why the latest tick has no score: learning the baseline, or too little current traffic (null when scored). */
  noScore: LoopState['noScore'];
  /** Why the band is held this tick (routes being confirmed), or null. */
  heldFor: LoopState['heldFor'];
  parserHealth: number | null;
  reasons: string[];
  controls: Controls | null;
  awaitingHuman: AwaitingHuman | null;
  lastDecision: DecisionSummary | null;
  routeDiagnosis: { verdict: string; summary: string } | null;
  alerts: LoopState['alerts'];
  /** Signals refused (bad payload or not allowed now), newest last. */
  rejected: string[];
  pendingDecisions: number;
  lastAssessedAt: string | null;
  /** The latest tick's full assessment (null right after a continue-as-new until the next tick). */
  lastAssessment: TickAssessment | null;
  /** The latest canary results — while paused, what tells the person deciding whether the site calmed down. */
  canaries: TickAssessment['canaries'];
  /** Why the loop cannot do its job right now (e.g. assessments failing on their data), or null. */
  problem: LoopProblem | null;
}

/** What `resume`, `stop` and `pause` updates answer once the decision is applied. */
export interface DecisionResult {
  decision: DecisionKind;
  decisionKey: string;
  decidedAt: string;
  band: HealthBand;
  controls: Controls | null;
  message: string;
}

/** The workflow's result after `stop`. */
export interface SiteHealthSummary {
  site: string;
  outcome: 'stopped';
  stoppedBy: string;
  why: string;
  decidedAt: string;
  ticks: number;
  runs: number;
  firstAssessedAt: string | null;
  lastAssessedAt: string | null;
  /** Band, scores and reasons at the last tick before the stop. */
  finalBand: HealthBand;
  finalScore: number | null;
  finalSmoothedScore: number | null;
  finalParserHealth: number | null;
  reasons: string[];
  bandTicks: LoopState['bandTicks'];
  decisions: number;
  controls: Controls | null;
}

export interface DeliverNotificationInput {
  notificationKey: string;
}

/** What one notification's delivery did: channels that took it, channels that refused it for good. */
export interface DeliveryReport {
  notificationKey: string;
  delivered: string[];
  failed: string[];
}

// --- Queries, signals, updates -----------------------------------------------------------------

export const stateQuery = defineQuery<SiteHealthState>('state');
/** Recent ticks, oldest first; the argument caps how many. */
export const historyQuery = defineQuery<TickSummary[], [number?]>('history');
/**
 * The settings the loop runs with now (every default filled in): what `start` compares a new start's
 * settings against.
 */
export const settingsQuery = defineQuery<SiteHealthConfig>('settings');

export const resumeSignal = defineSignal<[ResumeInput]>('resume');
export const stopSignal = defineSignal<[StopInput]>('stop');
export const pauseSignal = defineSignal<[PauseInput]>('pause');
export const resumeUpdate = defineUpdate<DecisionResult, [ResumeInput]>('resume');
export const stopUpdate = defineUpdate<DecisionResult, [StopInput]>('stop');
export const pauseUpdate = defineUpdate<DecisionResult, [PauseInput]>('pause');

/**
 * Live reconfiguration: changes a running loop's settings (and the site's owners) from the next tick on;
 * validated before it is accepted, recorded in `settings_changes`, carried through continue-as-new.
 * An update only: a change refused must say why.
 */
export const configureUpdate = defineUpdate<ConfigureResult, [ConfigureInput]>('configure');

/** Each decision kind's payload (what a client sends). */
export interface DecisionInputs {
  resume: ResumeInput;
  stop: StopInput;
  pause: PauseInput;
}

/** The signal and the update of each decision kind: a new kind fails to compile until it has both. */
export const decisionMessages: {
  readonly [K in DecisionKind]: {
    signal: SignalDefinition<[DecisionInputs[K]]>;
    update: UpdateDefinition<DecisionResult, [DecisionInputs[K]]>;
  };
} = {
  resume: { signal: resumeSignal, update: resumeUpdate },
  stop: { signal: stopSignal, update: stopUpdate },
  pause: { signal: pauseSignal, update: pauseUpdate },
};

// --- Errors --------------------------------------------------------------------------------------

/**
 * The `ApplicationFailure` types the loop and its delivery workflow throw. Clients match on these
 * (`err.cause.type === LoopErrors.DecisionNotAllowed`), never on message text.
 */
export const LoopErrors = {
  /** The workflow's start input (or a continued run's carried state) failed validation; names the field. */
  InvalidInput: 'InvalidInput',
  /** A decision's payload failed validation; names the field and the fix. */
  InvalidDecision: 'InvalidDecision',
  /** A `configure` payload failed validation (names the field), or the loop is stopping. */
  InvalidSettings: 'InvalidSettings',
  /** A decision not allowed now (resume while not paused, anything after stop). */
  DecisionNotAllowed: 'DecisionNotAllowed',
  /** The outbox has no notification under the key a delivery was started for. */
  NotificationNotFound: 'NotificationNotFound',
  /** A delivery gave up (after a day of retries); the outbox row records it. */
  NotificationNotDelivered: 'NotificationNotDelivered',
  /**
   * An activity's input data cannot be processed (a value the database or the scoring refuses): retrying
   * would fail the same way forever, so it is not retried; the loop reports it (`problem`) and carries on.
   */
  DataError: 'DataError',
} as const;
export type LoopErrorType = (typeof LoopErrors)[keyof typeof LoopErrors];
