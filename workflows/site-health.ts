/**
 * The durable per-site control loop (`site-health:<site>`): tick, act, wait, continue-as-new.
 *
 * Each tick: one assessment (a local activity: windows from the signal store, scored), then the pure
 * control core decides (core/control/plan), one idempotent action activity writes the controls and queues
 * the notices, and detached delivery workflows send them. A resisting site is paused and waits for a
 * person. The shape is the safe-message-handlers one: the loop's state lives in `SiteLoop`; the
 * message handlers, all set together in `siteHealth`, only read it (queries) or validate and queue
 * (decisions: workflows/decision-inbox.ts; settings: workflows/settings-inbox.ts); the main loop below
 * them is the one writer, applying what is queued between ticks. Every message is defined in
 * loop/messages.ts.
 */
import {
  ActivityFailure,
  type ActivityInterfaceFor,
  ApplicationFailure,
  type LocalActivityInterfaceFor,
  TemporalFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setDefaultSignalHandler,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../loop/search-attributes';
import { parseSiteHealthInput, type ParsedSiteHealthInput, type SiteHealthInput } from '../core/control/config';
import { changedFields, describeChange } from '../core/control/controls';
import { afterDecision, decisionAssessmentKey, decisionControls, decisionNotice } from '../core/control/decide';
import { DECISION_KINDS } from '../core/control/decisions';
import { detailsMarkdown } from '../core/control/details';
import { assessmentKey, controlsKey, deliveryWorkflowId, notificationKey } from '../core/control/keys';
import { type ConfigureResult, settingsChanges } from '../core/control/settings-change';
import { type LoopState, type TickSummary, initialLoopState } from '../core/control/loop-state';
import {
  type DecisionResult,
  LoopErrors,
  type SiteHealthState,
  type SiteHealthSummary,
  configureUpdate,
  decisionMessages,
  historyQuery,
  settingsQuery,
  stateQuery,
} from '../loop/messages';
import type { NoticeDraft } from '../core/control/notices';
import { type LoopConfig, type TickPlan, planTick } from '../core/control/plan';
import { assessmentCarry } from '../core/control/scoring-step';
import { planFailedTick } from '../core/control/plan/failed';
import { PublishedAttributes, attributesForNewRun, loopAttributes } from '../loop/attributes';
import { firstPhasedSlot, msUntilDue, nextSlot, phaseMs, tickTime } from '../core/control/schedule';
import { stateView, stopSummary } from '../loop/state-view';
import type { TickAssessment } from '../core/control/tick-assessment';
import type { AssessSiteInput } from '../activities/assess-site';
import {
  DecisionInbox,
  type QueuedDecision,
  decisionSignalDescription,
  decisionUpdateDescription,
} from './decision-inbox';
import { CONFIGURE_DESCRIPTION, type QueuedSettingsChange, SettingsInbox } from './settings-inbox';
import { deliverNotification } from './deliver-notification';

type LoopSettings = Omit<ParsedSiteHealthInput, 'carried'>;

/** What one run of the loop starts from. */
interface SiteLoopOptions {
  /** The loop's settings (the run's input, every default filled in). */
  settings: LoopSettings;
  /** The state the previous run of the chain carried through continue-as-new; absent on a new chain. */
  carried: LoopState | undefined;
}

/** The loop's activities with this run's timeouts and retry policy. */
function loopActivities(settings: LoopSettings): ActivityInterfaceFor<Activities> {
  return proxyActivities<Activities>({
    startToCloseTimeout: settings.timeouts.activityMs,
    // No maximum attempts: a tick that cannot read or write the database waits rather than guesses.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
  });
}

/**
 * The tick's assessment as a local activity: run by this worker inside the workflow task, two attempts
 * within one activity timeout — then the tick falls back to the regular activity (`loopActivities`),
 * which the server retries without limit on any worker.
 */
function proxyLocalAssessment(settings: LoopSettings): LocalActivityInterfaceFor<Pick<Activities, 'assessSite'>> {
  return proxyLocalActivities<Pick<Activities, 'assessSite'>>({
    startToCloseTimeout: settings.timeouts.activityMs,
    scheduleToCloseTimeout: settings.timeouts.activityMs + 1_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 2 },
  });
}

/**
 * An assessment's failure: its message, and whether it is a failure of the input itself
 * (LoopErrors.DataError: the same on every retry, so never retried as an activity either). A local
 * activity's failure arrives wrapped in an ActivityFailure when it happens, but bare (the cause alone)
 * when a run is replayed from its marker — after a cache eviction, on another worker — so both forms
 * are read the same way; anything else is not an assessment's failure.
 */
function assessmentFailure(err: unknown): { message: string; dataError: boolean } | null {
  const cause = err instanceof ActivityFailure ? err.cause : err instanceof TemporalFailure ? err : null;
  if (err instanceof ActivityFailure || cause !== null) {
    return {
      message: cause?.message ?? (err as Error).message,
      dataError: cause instanceof ApplicationFailure && cause.type === LoopErrors.DataError,
    };
  }
  return null;
}

/** Workflow time: the SDK's deterministic clock (the time of the current workflow task). */
const workflowNow = (): number => new Date().getTime();

/** One run of the loop: its settings, its state, and the side effects it drives. */
class SiteLoop {
  /** The loop's settings: replaced, between ticks, by a `configure` update (and carried by continue-as-new). */
  config: LoopSettings;
  state: LoopState;
  lastAssessment: TickAssessment | null = null;
  /** Human decisions: validated and queued by their handlers, applied by the main loop. */
  readonly decisions: DecisionInbox;
  /** Settings changes (`configure`): validated and queued by the update's handler, applied by the main loop. */
  readonly settingsInbox: SettingsInbox;
  private ticksThisRun = 0;
  /** Delivery workflows started by this run that have not finished yet. */
  private deliveriesInFlight = 0;
  private readonly workflowId = workflowInfo().workflowId;
  private readonly published: PublishedAttributes;
  private acts: ActivityInterfaceFor<Activities>;
  private localActs: LocalActivityInterfaceFor<Pick<Activities, 'assessSite'>>;

  constructor({ settings, carried }: SiteLoopOptions) {
    const info = workflowInfo();
    this.config = settings;
    this.state = carried ? { ...carried, runs: carried.runs + 1 } : initialLoopState(info.firstExecutionRunId);
    this.settingsInbox = new SettingsInbox(
      settings.site,
      this.state.chainId,
      this.state.settingsSeq,
      () => this.config,
      () => this.decisions.stopping(),
      this.applySettings,
    );
    this.decisions = new DecisionInbox(
      settings.site,
      this.state.chainId,
      this.state,
      () => ({ site: this.site, band: this.state.band, awaiting: this.state.awaiting !== null }),
      this.applyDecision,
      this.settingsInbox,
    );
    this.published = new PublishedAttributes(
      ALL_SEARCH_ATTRIBUTE_KEYS.map((key) => ({ name: key.name, value: info.typedSearchAttributes.get(key) ?? null })),
    );
    this.acts = loopActivities(settings);
    this.localActs = proxyLocalAssessment(settings);
    // A new chain books its first slot: the first at or after now whose wake time (slot + phase) is not past.
    if (this.state.nextTickAt === null) {
      this.state = {
        ...this.state,
        nextTickAt: new Date(firstPhasedSlot(workflowNow(), this.phase(), settings.tickIntervalMs)).toISOString(),
      };
    }
  }

  get site(): string {
    return this.config.site;
  }

  /** The site's offset after each slot (core/control/schedule.ts). */
  private phase(): number {
    return phaseMs(this.site, this.config.tickIntervalMs);
  }

  /** The next tick's slot: booked by the constructor on a new chain, and by every tick after. */
  private slot(): string {
    return this.state.nextTickAt!;
  }

  /** The `state` query. */
  view(): SiteHealthState {
    return stateView(this.site, this.config.tickIntervalMs, this.state, this.decisions.view(), this.lastAssessment);
  }

  /** The `history` query: the last `limit` ticks kept (all by default), oldest first. */
  recentTicks(limit?: number): TickSummary[] {
    const kept = this.state.history;
    return kept.slice(-Math.max(1, Math.min(limit ?? kept.length, kept.length)));
  }

  /** The Temporal UI: search attributes that changed, and the details table. */
  publish(): void {
    const changed = this.published.takeChanged(loopAttributes(this.site, this.state));
    if (changed.length > 0) upsertSearchAttributes(changed);
    setCurrentDetails(detailsMarkdown(this.site, this.state, this.config.tickIntervalMs, this.lastAssessment));
  }

  /**
   * Waits for the next tick's wake time (its slot plus the site's phase; a continued run waits for the
   * slot its predecessor booked), applying decisions and settings changes as they arrive. `early`: the
   * server suggests continue-as-new (signals grow the history even while the loop waits), so the run
   * continues as new before it would tick.
   */
  waitForTick(): Promise<'tick' | 'early'> {
    return this.decisions.waitForNextTick(
      () => msUntilDue(this.slot(), workflowNow(), this.phase()),
      () => `next tick at ${new Date(Date.parse(this.slot()) + this.phase()).toISOString()}`,
      () => workflowInfo().continueAsNewSuggested,
    );
  }

  /** One tick: assess, plan, act. */
  async tick(): Promise<void> {
    const { site, config } = this;
    const tick = this.state.tick + 1;
    // Workflow time: the tick's slot on the schedule, the same on replay of this history.
    const asOf = tickTime(this.slot(), workflowNow(), config.tickIntervalMs, this.phase());
    this.state = { ...this.state, nextTickAt: new Date(nextSlot(asOf, config.tickIntervalMs)).toISOString() };
    const { state } = this;
    const plan = this.plan();
    let t: TickAssessment;
    try {
      t = await this.assess(`assess ${site}, tick ${tick}`, {
        site,
        workflowId: this.workflowId,
        chainId: state.chainId,
        tick,
        window: config.window,
        scoring: config.scoring,
        // The streaks, and the smoothing the tick's row stores its scoring step from (planTick's own inputs).
        ...assessmentCarry(state),
        ...(plan.canary === undefined ? {} : { canary: plan.canary }),
        evidenceSince: state.evidenceSince,
        asOf: new Date(asOf).toISOString(),
      });
    } catch (err) {
      // Retries are unlimited, so only a refusal of the input itself (LoopErrors.DataError) ends up here.
      const failure = assessmentFailure(err);
      if (failure === null) throw err;
      // Workflow time (deterministic): there is no database time for an assessment that was not made.
      const failed = { tick, at: new Date(asOf).toISOString(), message: failure.message };
      return this.act(tick, assessmentKey(site, state.chainId, tick), null, planFailedTick(state, failed, plan));
    }
    this.lastAssessment = t;
    return this.act(tick, t.assessmentKey, t.assessmentKey, planTick(state, t, plan));
  }

  /** True when this run should hand over to a new one: the server suggests it, or the run has had its ticks. */
  runIsFull(): boolean {
    return workflowInfo().continueAsNewSuggested || this.ticksThisRun >= this.config.maxTicksPerRun;
  }

  /**
   * The tick's assessment: locally first, else — when the local attempts failed for any reason but the
   * data itself — as a regular activity. Both carry the tick's assessment key, so an attempt that wrote
   * before failing is found, not written again.
   */
  private async assess(summary: string, input: AssessSiteInput): Promise<TickAssessment> {
    try {
      return await this.localActs.assessSite.executeWithOptions({ summary }, [input]);
    } catch (err) {
      const failure = assessmentFailure(err);
      if (failure === null || failure.dataError) throw err;
      const why = failure.message.slice(0, 120);
      return this.acts.assessSite.executeWithOptions(
        { summary: `${summary} (retried as an activity: ${why})`.slice(0, 200) },
        [input],
      );
    }
  }

  /** What the planner needs of the settings. */
  private plan(): LoopConfig {
    const { site, config } = this;
    return { site, policy: config.policy, scoring: config.scoring, tickIntervalMs: config.tickIntervalMs };
  }

  /**
   * Carries out a tick's plan: controls and notices in one activity (only when something changes), then the new state.
   */
  private async act(tick: number, actionKey: string, assessed: string | null, plan: TickPlan): Promise<void> {
    const { site, state } = this;
    if (plan.change !== null || plan.notices.length > 0) {
      const notices = plan.notices.map((draft) => ({ key: notificationKey(actionKey, draft.kind), draft }));
      const what = [plan.change?.description, ...plan.notices.map((n) => `notify ${n.kind}`)]
        .filter((s) => s !== undefined)
        .join('; ');
      const result = await this.acts.applyActions.executeWithOptions(
        { summary: `tick ${tick} ${plan.state.band}: ${what}`.slice(0, 200) },
        [
          {
            site,
            workflowId: this.workflowId,
            chainId: state.chainId,
            actionKey: controlsKey(actionKey),
            assessmentKey: assessed,
            actor: 'control-loop',
            controls: plan.change,
            decision: null,
            notices,
          },
        ],
      );
      this.state = plan.state;
      // The state query and the search attributes change in the same workflow task, before the notices go out.
      this.publish();
      await this.dispatch(result.notificationKeys, plan.notices);
    } else {
      this.state = plan.state;
    }
    this.ticksThisRun += 1;
    this.publish();
  }

  /** Notifications go to detached delivery workflows, so a slow webhook never holds the loop. */
  private async dispatch(keys: readonly string[], notices: readonly NoticeDraft[]): Promise<void> {
    for (const [i, key] of keys.entries()) {
      try {
        const child = await startChild(deliverNotification, {
          workflowId: deliveryWorkflowId(key),
          args: [{ notificationKey: key }],
          parentClosePolicy: 'ABANDON',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          staticSummary: notices[i]?.title ?? `notification ${key}`,
        });
        this.deliveriesInFlight += 1;
        void child
          .result()
          .catch(() => undefined)
          .finally(() => {
            this.deliveriesInFlight -= 1;
          });
      } catch (err) {
        // Already started (same key): delivery is under way or done; never send twice.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }
  }

  /** Applies one human decision: controls, audit and notice in one activity, then the loop's state. */
  private readonly applyDecision = async (q: QueuedDecision): Promise<DecisionResult> => {
    const { site, state } = this;
    const d = q.decision;
    const next = decisionControls(state, d, this.config.policy);
    const notice = decisionNotice(site, state, d, next);
    const result = await this.acts.applyActions.executeWithOptions({ summary: `${d.kind} by ${d.who}`.slice(0, 200) }, [
      {
        site,
        workflowId: this.workflowId,
        chainId: state.chainId,
        actionKey: controlsKey(q.key),
        assessmentKey: decisionAssessmentKey(state),
        actor: `human:${d.who}`,
        controls:
          changedFields(state.controls, next).length > 0
            ? { next, description: describeChange(state.controls, next), routeDiagnosis: null }
            : null,
        decision: {
          decisionKey: q.key,
          kind: d.kind,
          who: d.who,
          why: d.why,
          mode: d.kind === 'resume' ? d.mode : null,
          via: q.via,
          assessmentKey: decisionAssessmentKey(state),
          awaitingSince: state.awaiting?.since ?? null,
        },
        notices: [{ key: notificationKey(q.key, notice.kind), draft: notice }],
      },
    ]);
    this.state = afterDecision(state, d, next, { decisionKey: q.key, via: q.via, decidedAt: result.appliedAt });
    this.publish();
    await this.dispatch(result.notificationKeys, [notice]);
    return {
      decision: d.kind,
      decisionKey: q.key,
      decidedAt: result.appliedAt,
      band: this.state.band,
      controls: this.state.controls,
      message: `${d.kind} applied to ${site}`,
    };
  };

  /**
   * Puts one settings change in force (between ticks): recorded first (owners and the audit row, one
   * activity, only when something changes), then the loop's settings replaced. A new tick interval
   * books the next tick on the new interval's grid at once, so it takes effect from the next tick.
   */
  private readonly applySettings = async (q: QueuedSettingsChange): Promise<ConfigureResult> => {
    const { site, state } = this;
    const before = this.config;
    const after = q.change.settings;
    const settingsChanged = settingsChanges(before, after);
    const ownersGiven = Object.keys(q.change.owners).length > 0;
    let recorded: { changedAt: string | null; changes: ConfigureResult['changes'] } = { changedAt: null, changes: [] };
    if (settingsChanged.length > 0 || ownersGiven) {
      recorded = await this.acts.recordSettingsChange.executeWithOptions(
        {
          summary: `configure by ${q.change.who}: ${settingsChanged.map((c) => c.field).join(', ') || 'owners'}`.slice(
            0,
            200,
          ),
        },
        [
          {
            site,
            workflowId: this.workflowId,
            chainId: state.chainId,
            changeKey: q.key,
            who: q.change.who,
            why: q.change.why,
            changes: settingsChanged,
            settings: after,
            owners: q.change.owners,
          },
        ],
      );
    }
    this.config = after;
    if (after.timeouts.activityMs !== before.timeouts.activityMs) {
      this.acts = loopActivities(after);
      this.localActs = proxyLocalAssessment(after);
    }
    if (after.tickIntervalMs !== before.tickIntervalMs) {
      this.state = { ...this.state, nextTickAt: new Date(nextSlot(workflowNow(), after.tickIntervalMs)).toISOString() };
    }
    this.publish();
    const n = recorded.changes.length;
    return {
      site,
      changeKey: q.key,
      changedAt: recorded.changedAt,
      changes: recorded.changes,
      tickIntervalMs: this.config.tickIntervalMs,
      nextTickAt: this.state.nextTickAt,
      message:
        n === 0
          ? `nothing changed: ${site} already has these settings`
          : `${n} setting${n === 1 ? '' : 's'} of ${site} changed by ${q.change.who}`,
    };
  };

  /** After a stop: every queued decision applied (refused) and every handler finished, then the summary. */
  async finish(): Promise<SiteHealthSummary> {
    await this.decisions.drain(allHandlersFinished);
    return stopSummary(this.site, this.state, this.decisions.stopped!, this.decisions.view().seq);
  }

  /**
   * Before continue-as-new: this run's deliveries finished (at most 10 s: a webhook that is down keeps
   * retrying in its own workflow, which the next run does not need; a run closing while one completes
   * is refused by the server), then every queued decision and settings change applied and every
   * handler finished.
   */
  async prepareToContinue(): Promise<void> {
    if (this.deliveriesInFlight > 0) {
      await condition(() => this.deliveriesInFlight === 0, '10 seconds', {
        summary: 'deliveries finishing before continue-as-new',
      });
    }
    await this.decisions.drain(allHandlersFinished);
  }

  /** Everything the loop knows goes to the next run, a pending human wait included. */
  continueAsNew(): Promise<never> {
    const next = makeContinueAsNewFunc<typeof siteHealth>({
      typedSearchAttributes: attributesForNewRun(this.site, this.state),
    });
    return next({
      ...this.config,
      carried: { ...this.state, ...this.decisions.carry(), ...this.settingsInbox.carry() },
    });
  }
}

export async function siteHealth(input: SiteHealthInput): Promise<SiteHealthSummary> {
  const parsed = parseSiteHealthInput(input);
  if (!parsed.ok)
    throw ApplicationFailure.nonRetryable(`invalid siteHealth input: ${parsed.message}`, LoopErrors.InvalidInput);
  const { carried, ...settings } = parsed.value;
  const loop = new SiteLoop({ settings, carried });

  // Messages. Queries read the loop's state; signals and updates only validate and queue — the main
  // loop below applies decisions and settings changes between ticks, so nothing interleaves with a tick.
  setHandler(stateQuery, () => loop.view(), {
    description:
      'Current state: score, smoothed score, band, reasons, controls, awaiting a human since, last decision.',
  });
  setHandler(historyQuery, (limit?: number) => loop.recentTicks(limit), {
    description: 'Recent ticks, oldest first (optional argument: how many, default all kept).',
  });
  setHandler(settingsQuery, () => loop.config, {
    description: 'The settings the loop runs with (every default filled in).',
  });
  for (const kind of DECISION_KINDS) {
    const { signal, update } = decisionMessages[kind];
    setHandler(signal, (payload: unknown) => loop.decisions.signal(kind, payload), {
      description: decisionSignalDescription(kind),
    });
    setHandler(update, (payload: unknown) => loop.decisions.update(kind, payload), {
      validator: (payload: unknown) => loop.decisions.validate(kind, payload),
      description: decisionUpdateDescription(kind),
    });
  }
  setHandler(configureUpdate, (payload: unknown) => loop.settingsInbox.configure(payload), {
    validator: (payload: unknown) => loop.settingsInbox.validate(payload),
    description: CONFIGURE_DESCRIPTION,
  });
  // A signal of a name the loop does not know (a mistyped `resmue`) is recorded as refused, not lost.
  setDefaultSignalHandler((name: string) => loop.decisions.unknownSignal(name));

  // The main loop: wait for the tick (applying what arrives), tick, then stop, continue as new, or go on.
  loop.publish();
  for (;;) {
    const woke = await loop.waitForTick();
    if (woke === 'tick' && loop.decisions.stopped === null) {
      await loop.tick();
      await loop.decisions.applyQueued();
    }
    if (loop.decisions.stopped !== null) return loop.finish();
    if (woke === 'early' || loop.runIsFull()) {
      await loop.prepareToContinue();
      if (loop.decisions.stopped !== null) return loop.finish();
      return loop.continueAsNew();
    }
  }
}
