/**
 * The durable per-site control loop (`site-health:<site>`): tick, act, wait, continue-as-new.
 *
 * Each tick: one assessment activity (windows from the signal store, scored), then the pure control
 * core decides (control/plan), one idempotent action activity writes the controls and queues the
 * notices, and detached delivery workflows send them. A resisting site is paused and waits for a
 * person: decisions arrive through the inbox (workflows/decision-inbox.ts) and are applied here,
 * between ticks, through `applyDecision`. Every message is defined in control/messages.ts.
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
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../common/search-attributes';
import { parseSiteHealthInput, type ParsedSiteHealthInput, type SiteHealthInput } from '../control/config';
import { changedFields, describeChange } from '../control/controls';
import { afterDecision, decisionAssessmentKey, decisionControls, decisionNotice } from '../control/decide';
import { detailsMarkdown } from '../control/details';
import { assessmentKey, controlsKey, deliveryWorkflowId, notificationKey } from '../control/keys';
import { type ConfigureResult, settingsChanges } from '../control/settings-change';
import { type LoopState, initialLoopState } from '../control/loop-state';
import {
  type DecisionResult,
  LoopErrors,
  type SiteHealthSummary,
  historyQuery,
  settingsQuery,
  stateQuery,
} from '../control/messages';
import type { NoticeDraft } from '../control/notices';
import { type JudgementVersion, type LoopConfig, type TickPlan, planTick } from '../control/plan';
import { planFailedTick } from '../control/plan/failed';
import { PublishedAttributes, attributesForNewRun, loopAttributes } from '../control/search-attributes';
import { firstPhasedSlot, msUntilDue, nextSlot, phaseMs, tickTime } from '../control/schedule';
import { stateView, stopSummary } from '../control/state-view';
import type { TickAssessment } from '../control/tick-assessment';
import type { AssessSiteInput } from '../activities/assess-site';
import { DecisionInbox, type QueuedDecision } from './decision-inbox';
import { type QueuedSettingsChange, SettingsInbox } from './settings-inbox';
import { deliverNotification } from './deliver-notification';
import { PATCHES } from './patches';

type LoopSettings = Omit<ParsedSiteHealthInput, 'carried'>;

/** The loop's activities with this run's timeouts and retry policy. */
function loopActivities(settings: LoopSettings): ActivityInterfaceFor<Activities> {
  return proxyActivities<Activities>({
    startToCloseTimeout: settings.timeouts.activityMs,
    // No maximum attempts: a tick that cannot read or write the database waits rather than guesses.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
  });
}

/**
 * The tick's assessment as a local activity (patch `local-assessment`): run by this worker inside the
 * workflow task, two attempts within one activity timeout — then the tick falls back to the regular
 * activity (`loopActivities`), which the server retries without limit on any worker.
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

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** One run of the loop: its settings, its state, and the side effects it drives. */
class SiteLoop {
  state: LoopState;
  lastAssessment: TickAssessment | null = null;
  ticksThisRun = 0;
  /** Delivery workflows started by this run that have not finished yet. */
  private deliveriesInFlight = 0;
  readonly inbox: DecisionInbox;
  /** Live reconfiguration (patch `live-settings`); null on runs recorded before it. */
  readonly settingsInbox: SettingsInbox | null;
  private readonly workflowId = workflowInfo().workflowId;
  private readonly published: PublishedAttributes;
  private acts: ActivityInterfaceFor<Activities>;
  /** Patch `local-assessment`: the assessment's local-activity proxy; null on runs recorded before it. */
  private localActs: LocalActivityInterfaceFor<Pick<Activities, 'assessSite'>> | null;

  constructor(
    /** The loop's settings: replaced, between ticks, by a `configure` update (and carried by continue-as-new). */
    public config: LoopSettings,
    carried: LoopState | undefined,
    /** Ticks follow the schedule (control/schedule.ts); false only when replaying runs that predate it. */
    readonly scheduled: boolean,
    /** The judgement rules of this run (control/plan/types.ts); 1 only when replaying runs that predate judgement 2. */
    readonly judgement: JudgementVersion,
    /** Patch `live-settings`: the `configure` update, unknown signals refused, refusals pruned by a decision. */
    readonly liveSettings: boolean,
    /** Patch `local-assessment`: the assessment runs as a local activity first. */
    readonly localAssessment: boolean,
    /** Patch `tick-phase`: the loop wakes at its site's phase after each slot (control/schedule.ts). */
    readonly phased: boolean,
  ) {
    const info = workflowInfo();
    this.state = carried ? { ...carried, runs: carried.runs + 1 } : initialLoopState(info.firstExecutionRunId);
    this.inbox = new DecisionInbox(
      config.site,
      this.state.chainId,
      this.state,
      () => ({ site: config.site, band: this.state.band, awaiting: this.state.awaiting !== null }),
      liveSettings,
    );
    this.settingsInbox = liveSettings
      ? new SettingsInbox(
          config.site,
          this.state.chainId,
          this.state.settingsSeq,
          () => this.config,
          () => this.inbox.stopping(),
        )
      : null;
    this.published = new PublishedAttributes(
      ALL_SEARCH_ATTRIBUTE_KEYS.map((key) => ({ name: key.name, value: info.typedSearchAttributes.get(key) ?? null })),
    );
    this.acts = loopActivities(config);
    this.localActs = localAssessment ? proxyLocalAssessment(config) : null;
    // A new phased chain books its first slot: the first at or after now whose wake time (slot + phase) is not past.
    if (phased && scheduled && this.state.nextTickAt === null) {
      this.state = {
        ...this.state,
        nextTickAt: new Date(firstPhasedSlot(workflowNow(), this.phase(), config.tickIntervalMs)).toISOString(),
      };
    }
  }

  /** The site's offset after each slot (0 on runs that predate patch `tick-phase`). */
  phase(): number {
    return this.phased ? phaseMs(this.config.site, this.config.tickIntervalMs) : 0;
  }

  /** When the next tick wakes (ISO), for summaries and the details: its slot plus the site's phase. */
  nextWakeAt(): string | null {
    const slot = this.state.nextTickAt;
    return slot === null ? null : new Date(Date.parse(slot) + this.phase()).toISOString();
  }

  get site(): string {
    return this.config.site;
  }

  registerHandlers(): void {
    setHandler(
      stateQuery,
      () => stateView(this.site, this.config.tickIntervalMs, this.state, this.inbox.view(), this.lastAssessment),
      {
        description:
          'Current state: score, smoothed score, band, reasons, controls, awaiting a human since, last decision.',
      },
    );
    setHandler(
      historyQuery,
      (limit?: number) =>
        this.state.history.slice(-Math.max(1, Math.min(limit ?? this.state.history.length, this.state.history.length))),
      {
        description: 'Recent ticks, oldest first (optional argument: how many, default all kept).',
      },
    );
    setHandler(settingsQuery, () => this.config, {
      description: 'The settings the loop runs with (every default filled in).',
    });
    this.inbox.register();
    if (this.settingsInbox !== null) {
      this.settingsInbox.register(this.applySettings);
      this.inbox.alsoApply(this.settingsInbox);
      this.inbox.registerUnknownSignals();
    }
  }

  /** The Temporal UI: search attributes that changed, and the details table. */
  publish(): void {
    const changed = this.published.takeChanged(loopAttributes(this.site, this.state));
    if (changed.length > 0) upsertSearchAttributes(changed);
    setCurrentDetails(detailsMarkdown(this.site, this.state, this.config.tickIntervalMs, this.lastAssessment));
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

  /** Milliseconds until the next tick's slot (≤ 0: due now). */
  msUntilDue(): number {
    return msUntilDue(this.state.nextTickAt, workflowNow(), this.phase());
  }

  /** One tick: assess, plan, act. */
  async tick(): Promise<void> {
    const { site, config, state } = this;
    const tick = state.tick + 1;
    // Workflow time: the tick's slot on the schedule, the same on replay of this history.
    const asOf = this.scheduled ? tickTime(state.nextTickAt, workflowNow(), config.tickIntervalMs, this.phase()) : null;
    if (asOf !== null)
      this.state = { ...state, nextTickAt: new Date(nextSlot(asOf, config.tickIntervalMs)).toISOString() };
    let t: TickAssessment;
    try {
      t = await this.assess(`assess ${site}, tick ${tick}`, {
        site,
        workflowId: this.workflowId,
        chainId: state.chainId,
        tick,
        window: config.window,
        scoring: config.scoring,
        previousRefusal: state.scoring.refusalStreak,
        previous: { majorityStreak: state.scoring.majorityStreak ?? 0, routeWatch: state.scoring.routeWatch ?? [] },
        evidenceSince: state.evidenceSince,
        ...(asOf === null ? {} : { asOf: new Date(asOf).toISOString() }),
      });
    } catch (err) {
      // Retries are unlimited, so only a refusal of the input itself (LoopErrors.DataError) ends up here.
      const failure = assessmentFailure(err);
      if (failure === null) throw err;
      // Workflow time (deterministic): there is no database time for an assessment that was not made.
      const failed = { tick, at: new Date(asOf ?? workflowNow()).toISOString(), message: failure.message };
      return this.act(
        tick,
        assessmentKey(site, state.chainId, tick),
        null,
        planFailedTick(this.state, failed, this.loopConfig()),
      );
    }
    this.lastAssessment = t;
    return this.act(tick, t.assessmentKey, t.assessmentKey, planTick(this.state, t, this.loopConfig()));
  }

  /**
   * The tick's assessment: locally first (patch `local-assessment`), else — or when the local attempts
   * failed for any reason but the data itself — as a regular activity. Both carry the tick's
   * assessment key, so an attempt that wrote before failing is found, not written again.
   */
  private async assess(summary: string, input: AssessSiteInput): Promise<TickAssessment> {
    if (this.localActs !== null) {
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
    return this.acts.assessSite.executeWithOptions({ summary }, [input]);
  }

  private loopConfig(): LoopConfig {
    return {
      site: this.site,
      policy: this.config.policy,
      scoring: this.config.scoring,
      judgement: this.judgement,
      tickIntervalMs: this.config.tickIntervalMs,
    };
  }

  /** Carries out a tick's plan: controls and notices in one activity, then the new state. */
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
      // The state query and the search attributes change in the same workflow task.
      if (patched(PATCHES.publishBeforeDispatch)) this.publish();
      await this.dispatch(result.notificationKeys, plan.notices);
    } else {
      this.state = plan.state;
    }
    this.ticksThisRun += 1;
    this.publish();
  }

  /** Applies one human decision: controls, audit and notice in one activity, then the loop's state. */
  readonly applyDecision = async (q: QueuedDecision): Promise<DecisionResult> => {
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
  readonly applySettings = async (q: QueuedSettingsChange): Promise<ConfigureResult> => {
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
      if (this.localActs !== null) this.localActs = proxyLocalAssessment(after);
    }
    if (after.tickIntervalMs !== before.tickIntervalMs && this.scheduled && this.state.nextTickAt !== null) {
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

  async finish(): Promise<SiteHealthSummary> {
    await this.inbox.drain(this.applyDecision, allHandlersFinished);
    return stopSummary(this.site, this.state, this.inbox.stopped!, this.inbox.view().seq);
  }

  /**
   * Before continue-as-new: this run's deliveries finished (at most 10 s: a webhook that is down
   * keeps retrying in its own workflow, which the next run does not need), then every queued decision
   * applied and every handler finished. Runs that predate the patch only drain.
   */
  async prepareToContinue(waitForDeliveries: boolean): Promise<void> {
    if (waitForDeliveries && this.deliveriesInFlight > 0) {
      await condition(() => this.deliveriesInFlight === 0, '10 seconds', {
        summary: 'deliveries finishing before continue-as-new',
      });
    }
    await this.inbox.drain(this.applyDecision, allHandlersFinished);
  }

  /** Everything the loop knows goes to the next run, a pending human wait included. */
  async continueAsNew(): Promise<never> {
    const next = makeContinueAsNewFunc<typeof siteHealth>({
      typedSearchAttributes: attributesForNewRun(this.site, this.state),
    });
    return next({
      ...this.config,
      carried: { ...this.state, ...this.inbox.carry(), ...(this.settingsInbox?.carry() ?? {}) },
    });
  }

  shouldContinueAsNew(): boolean {
    return workflowInfo().continueAsNewSuggested || this.ticksThisRun >= this.config.maxTicksPerRun;
  }
}

export async function siteHealth(input: SiteHealthInput): Promise<SiteHealthSummary> {
  const parsed = parseSiteHealthInput(input);
  if (!parsed.ok)
    throw ApplicationFailure.nonRetryable(`invalid siteHealth input: ${parsed.message}`, LoopErrors.InvalidInput);
  const { carried, ...config } = parsed.value;
  // Runs recorded before these patches replay on their old paths.
  const wakeOnLargeHistory = patched(PATCHES.continueAsNewWhileWaiting);
  const scheduled = patched(PATCHES.tickSchedule);
  const waitForDeliveries = patched(PATCHES.deliveriesBeforeContinueAsNew);
  // Both read on every run, in this order: a run recorded before judgement 3 replays with judgement 2.
  const judgement2 = patched(PATCHES.judgement2);
  const judgement3 = patched(PATCHES.judgement3);
  const judgement: JudgementVersion = judgement3 ? 3 : judgement2 ? 2 : 1;
  const liveSettings = patched(PATCHES.liveSettings);
  const localAssessment = patched(PATCHES.localAssessment);
  const phased = patched(PATCHES.tickPhase);
  const loop = new SiteLoop(config, carried, scheduled, judgement, liveSettings, localAssessment, phased);
  const { inbox } = loop;
  loop.registerHandlers();
  loop.publish();
  const wakeEarly = () => wakeOnLargeHistory && workflowInfo().continueAsNewSuggested;
  for (;;) {
    if (scheduled) {
      // Wait for the tick's slot (a continued run waits for the one its predecessor booked).
      const woke = await inbox.waitForNextTick(
        () => loop.msUntilDue(),
        () => `next tick at ${loop.nextWakeAt() ?? 'once'}`,
        loop.applyDecision,
        wakeEarly,
      );
      if (inbox.stopped !== null) return loop.finish();
      if (woke === 'early') {
        await loop.prepareToContinue(waitForDeliveries);
        if (inbox.stopped !== null) return loop.finish();
        await loop.continueAsNew();
      }
    }
    await loop.tick();
    await inbox.applyQueued(loop.applyDecision);
    if (inbox.stopped !== null) return loop.finish();
    if (loop.shouldContinueAsNew()) {
      await loop.prepareToContinue(waitForDeliveries);
      if (inbox.stopped !== null) return loop.finish();
      await loop.continueAsNew();
    }
    if (scheduled) continue;
    const woke = await inbox.waitForNextTick(
      () => loop.config.tickIntervalMs,
      () => `next tick in ${seconds(loop.config.tickIntervalMs)}`,
      loop.applyDecision,
      wakeEarly,
    );
    if (inbox.stopped !== null) return loop.finish();
    if (woke === 'early') {
      await loop.prepareToContinue(waitForDeliveries);
      if (inbox.stopped !== null) return loop.finish();
      await loop.continueAsNew();
    }
  }
}
