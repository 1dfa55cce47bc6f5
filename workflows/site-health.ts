/**
 * The durable per-site control loop (`site-health:<site>`). Each tick: one assessment activity (windows
 * from the signal store, scored), smoothing and bands in workflow state (pure: control/tick.ts), then
 * the band's actions through one idempotent action activity, and notifications handed to detached
 * delivery workflows. A resisting site is paused and waits for a person: `resume`, `stop` or `pause`
 * arrive as signals or as updates (validated first, answered when applied).
 *
 * One writer: message handlers only validate and queue a decision; the main loop applies queued
 * decisions between ticks. So a decision never interleaves with a tick's actions, and every control
 * change happens in one place, in order (the safe-message-handlers idiom without a mutex).
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  log,
  makeContinueAsNewFunc,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, type SearchAttributePair, type SearchAttributeUpdatePair } from '@temporalio/common';
import type { Activities } from '../activities';
import { AwaitingHuman, HealthBand, HealthScore, ParserHealth, TargetSite } from '../common/search-attributes';
import { changedFields, describeChange, type Controls } from './control/controls';
import { afterDecision, decisionAssessmentKey, decisionControls, decisionNotice } from './control/decide';
import { type DecisionKind, type GateView, type ParsedDecision, type PauseInput, type ResumeInput, type StopInput, decisionNotAllowed, parseDecision } from './control/decisions';
import { detailsMarkdown } from './control/details';
import { type AwaitingHuman as Awaiting, type DecisionSummary, type LoopState, REJECTED_LIMIT, type TickSummary, initialLoopState, pushBounded } from './control/loop-state';
import type { NoticeDraft } from './control/notices';
import { planTick } from './control/tick';
import type { TickAssessment } from './control/tick-assessment';
import { deliverNotification } from './deliver-notification';
import { parseSiteHealthInput, type SiteHealthInput } from './site-health-input';

/** What `state` answers: where the site stands, its controls, and whether it waits for a person. */
export interface SiteHealthState {
  site: string;
  chainId: string;
  runs: number;
  tick: number;
  tickIntervalMs: number;
  band: LoopState['band'];
  scoredBand: LoopState['band'];
  score: number | null;
  smoothedScore: number | null;
  parserHealth: number | null;
  reasons: string[];
  controls: Controls | null;
  awaitingHuman: Awaiting | null;
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
}

/** What `resume`, `stop` and `pause` updates answer once the decision is applied. */
export interface DecisionResult {
  decision: DecisionKind;
  decisionKey: string;
  decidedAt: string;
  band: LoopState['band'];
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
  finalBand: LoopState['band'];
  finalScore: number | null;
  finalSmoothedScore: number | null;
  finalParserHealth: number | null;
  reasons: string[];
  bandTicks: LoopState['bandTicks'];
  decisions: number;
  controls: Controls | null;
}

export const stateQuery = defineQuery<SiteHealthState>('state');
export const historyQuery = defineQuery<TickSummary[], [number?]>('history');
export const resumeSignal = defineSignal<[ResumeInput]>('resume');
export const stopSignal = defineSignal<[StopInput]>('stop');
export const pauseSignal = defineSignal<[PauseInput]>('pause');
export const resumeUpdate = defineUpdate<DecisionResult, [ResumeInput]>('resume');
export const stopUpdate = defineUpdate<DecisionResult, [StopInput]>('stop');
export const pauseUpdate = defineUpdate<DecisionResult, [PauseInput]>('pause');

const DESCRIPTIONS: Record<DecisionKind, string> = {
  resume:
    'A person resumes a paused site: {"who", "why", "mode": "cautious"} (degrading-band controls) or {"who", "why", "mode": "explicit", "concurrency": n, "revisitMultiplier": x}. Only while the site waits for a decision.',
  stop: 'A person stops the site: {"who", "why"}. Controls say stopped and the loop completes with a summary.',
  pause: 'An operator pauses the site by hand: {"who", "why"}. Canaries only, waiting for resume or stop.',
};

interface Queued {
  decision: ParsedDecision;
  via: 'signal' | 'update';
  key: string;
  outcome?: { ok: true; result: DecisionResult } | { ok: false; message: string };
}

function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`invalid siteHealth input: ${message}`, 'InvalidInput');
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

export async function siteHealth(input: SiteHealthInput): Promise<SiteHealthSummary> {
  const parsed = parseSiteHealthInput(input);
  if (!parsed.ok) throw invalidInput(parsed.message);
  const { carried, ...config } = parsed.value;
  const site = config.site;
  const info = workflowInfo();
  const workflowId = info.workflowId;
  let state: LoopState = carried ? { ...carried, runs: carried.runs + 1 } : initialLoopState(info.firstExecutionRunId);
  const chainId = state.chainId;
  // Handler-owned: signals and updates number decisions and log refusals even while a tick's
  // activities are in flight, so these live outside `state` (which a tick replaces when it ends).
  const inbox = { seq: state.decisionSeq, rejected: [...state.rejected] };
  const queue: Queued[] = [];
  let stopped: { decision: ParsedDecision; decidedAt: string } | null = null;
  let lastAssessment: TickAssessment | null = null;
  let ticksThisRun = 0;
  const loopConfig = { site, policy: config.policy, scoring: config.scoring };

  const acts = proxyActivities<Activities>({
    startToCloseTimeout: config.timeouts.activityMs,
    // No maximum attempts: a tick that cannot read or write the database waits rather than guesses.
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
  });

  // --- Queries -------------------------------------------------------------------------------------
  setHandler(
    stateQuery,
    (): SiteHealthState => ({
      site,
      chainId,
      runs: state.runs,
      tick: state.tick,
      tickIntervalMs: config.tickIntervalMs,
      band: state.band,
      scoredBand: state.scoredBand,
      score: state.score,
      smoothedScore: state.smoothedScore,
      parserHealth: state.parserHealth,
      reasons: state.reasons,
      controls: state.controls,
      awaitingHuman: state.awaiting,
      lastDecision: state.lastDecision,
      routeDiagnosis: lastAssessment ? { verdict: lastAssessment.assessment.routes.verdict, summary: lastAssessment.assessment.routes.summary } : null,
      alerts: state.alerts,
      rejected: inbox.rejected,
      pendingDecisions: queue.length,
      lastAssessedAt: state.lastAssessedAt,
      lastAssessment,
      canaries: lastAssessment?.canaries ?? null,
    }),
    { description: 'Current state: score, smoothed score, band, reasons, controls, awaiting a human since, last decision.' },
  );
  setHandler(historyQuery, (limit?: number) => state.history.slice(-Math.max(1, Math.min(limit ?? state.history.length, state.history.length))), {
    description: 'Recent ticks, oldest first (optional argument: how many, default all kept).',
  });

  // --- Human decisions: validate, queue; the main loop applies them -------------------------------
  /** The gate as it will be once the decisions already queued are applied. */
  function gate(): GateView {
    let awaiting = state.awaiting !== null;
    let stopping = stopped !== null;
    for (const q of queue) {
      if (q.decision.kind === 'pause') awaiting = true;
      else awaiting = false;
      if (q.decision.kind === 'stop') stopping = true;
    }
    return { site, band: state.band, stopped: stopping, awaiting };
  }

  function check(kind: DecisionKind, payload: unknown): ParsedDecision {
    const parsedDecision = parseDecision(kind, payload);
    if (!parsedDecision.ok) throw ApplicationFailure.nonRetryable(parsedDecision.message, 'InvalidDecision');
    const problem = decisionNotAllowed(kind, gate());
    if (problem !== null) throw ApplicationFailure.nonRetryable(problem, 'DecisionNotAllowed');
    return parsedDecision.decision;
  }

  function enqueue(decision: ParsedDecision, via: Queued['via']): Queued {
    inbox.seq += 1;
    const q: Queued = { decision, via, key: `${site}/${chainId}/decision/${inbox.seq}` };
    queue.push(q);
    return q;
  }

  for (const [kind, signal, update] of [
    ['resume', resumeSignal, resumeUpdate],
    ['stop', stopSignal, stopUpdate],
    ['pause', pauseSignal, pauseUpdate],
  ] as const) {
    setHandler(
      signal,
      (payload: unknown) => {
        try {
          enqueue(check(kind, payload), 'signal');
        } catch (err) {
          // A signal cannot answer; the refusal is logged and shown by the `state` query.
          const message = err instanceof Error ? err.message : String(err);
          log.warn('decision signal refused', { site, kind, message });
          inbox.rejected = pushBounded(inbox.rejected, message, REJECTED_LIMIT);
        }
      },
      { description: `${DESCRIPTIONS[kind]} (Signal: fire and forget; refusals show in the state query.)` },
    );
    setHandler(
      update,
      async (payload: unknown): Promise<DecisionResult> => {
        const q = enqueue(check(kind, payload), 'update');
        await condition(() => q.outcome !== undefined);
        const outcome = q.outcome!;
        if (!outcome.ok) throw ApplicationFailure.nonRetryable(outcome.message, 'DecisionNotAllowed');
        return outcome.result;
      },
      {
        validator: (payload: unknown) => {
          check(kind, payload);
        },
        description: `${DESCRIPTIONS[kind]} (Update: validated before it is accepted; answers with the controls applied.)`,
      },
    );
  }

  // --- The Temporal UI: search attributes, current details --------------------------------------
  const published = new Map<string, unknown>();
  for (const key of [TargetSite, HealthScore, HealthBand, ParserHealth, AwaitingHuman]) published.set(key.name, info.typedSearchAttributes.get(key) ?? null);

  function currentAttributes(): SearchAttributePair[] {
    return [
      { key: TargetSite, value: site },
      { key: HealthBand, value: state.band },
      { key: AwaitingHuman, value: state.awaiting !== null },
      ...(state.smoothedScore === null ? [] : [{ key: HealthScore, value: state.smoothedScore }]),
      ...(state.parserHealth === null ? [] : [{ key: ParserHealth, value: state.parserHealth }]),
    ];
  }

  /** Upserts the search attributes that changed (computed every tick), and the details table. */
  function publish(): void {
    const wanted: SearchAttributeUpdatePair[] = [
      { key: TargetSite, value: site },
      { key: HealthBand, value: state.band },
      { key: AwaitingHuman, value: state.awaiting !== null },
      // null removes the attribute: no score while learning.
      { key: HealthScore, value: state.smoothedScore },
      { key: ParserHealth, value: state.parserHealth },
    ];
    // Unchanged values are not re-sent: each upsert is a history event and a visibility write.
    const changed = wanted.filter((p) => published.get(p.key.name) !== p.value);
    if (changed.length > 0) {
      upsertSearchAttributes(changed);
      for (const p of changed) published.set(p.key.name, p.value);
    }
    setCurrentDetails(detailsMarkdown(site, state, config.tickIntervalMs));
  }

  // --- Notifications: detached delivery workflows, so a slow webhook never holds the loop ---------
  async function dispatch(keys: readonly string[], notices: readonly NoticeDraft[]): Promise<void> {
    for (const [i, key] of keys.entries()) {
      try {
        await startChild(deliverNotification, {
          workflowId: `notify:${key}`,
          args: [{ notificationKey: key }],
          parentClosePolicy: 'ABANDON',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          staticSummary: notices[i]?.title ?? `notification ${key}`,
        });
      } catch (err) {
        // Already started (same key): delivery is under way or done; never send twice.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }
  }

  // --- One tick --------------------------------------------------------------------------------
  async function runTick(): Promise<void> {
    const tick = state.tick + 1;
    const t = await acts.assessSite.executeWithOptions(
      { startToCloseTimeout: config.timeouts.activityMs, summary: `assess ${site}, tick ${tick}` },
      [{ site, workflowId, chainId, tick, window: config.window, scoring: config.scoring, previousRefusal: state.scoring.refusalStreak, evidenceSince: state.evidenceSince }],
    );
    lastAssessment = t;
    const plan = planTick(state, t, loopConfig);
    if (plan.change !== null || plan.notices.length > 0) {
      const actionKey = `${site}/${chainId}/${tick}`;
      const notices = plan.notices.map((draft) => ({ key: `${actionKey}/notify-${draft.kind}`, draft }));
      const what = [plan.change?.description, ...plan.notices.map((n) => `notify ${n.kind}`)].filter((s) => s !== undefined).join('; ');
      const result = await acts.applyActions.executeWithOptions(
        { startToCloseTimeout: config.timeouts.activityMs, summary: `tick ${tick} ${plan.state.band}: ${what}`.slice(0, 200) },
        [{ site, workflowId, chainId, actionKey: `${actionKey}/controls`, assessmentKey: t.assessmentKey, actor: 'control-loop', controls: plan.change, decision: null, notices }],
      );
      state = plan.state;
      await dispatch(result.notificationKeys, plan.notices);
    } else {
      state = plan.state;
    }
    ticksThisRun += 1;
    publish();
  }

  // --- Decisions, applied by the main loop in arrival order ---------------------------------------
  async function applyQueued(): Promise<void> {
    for (let q = queue.shift(); q !== undefined; q = queue.shift()) {
      const problem = decisionNotAllowed(q.decision.kind, { site, band: state.band, stopped: stopped !== null, awaiting: state.awaiting !== null });
      if (problem !== null) {
        q.outcome = { ok: false, message: problem };
        continue;
      }
      const d = q.decision;
      const next = decisionControls(state, d, config.policy);
      const notice = decisionNotice(site, state, d, next);
      const result = await acts.applyActions.executeWithOptions(
        { startToCloseTimeout: config.timeouts.activityMs, summary: `${d.kind} by ${d.who}`.slice(0, 200) },
        [
          {
            site,
            workflowId,
            chainId,
            actionKey: `${q.key}/controls`,
            assessmentKey: decisionAssessmentKey(state),
            actor: `human:${d.who}`,
            controls: changedFields(state.controls, next).length > 0 ? { next, description: describeChange(state.controls, next), routeDiagnosis: null } : null,
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
            notices: [{ key: `${q.key}/notify-${notice.kind}`, draft: notice }],
          },
        ],
      );
      state = afterDecision(state, d, next, { decisionKey: q.key, via: q.via, decidedAt: result.appliedAt });
      if (d.kind === 'stop') stopped = { decision: d, decidedAt: result.appliedAt };
      publish();
      await dispatch(result.notificationKeys, [notice]);
      q.outcome = {
        ok: true,
        result: { decision: d.kind, decisionKey: q.key, decidedAt: result.appliedAt, band: state.band, controls: state.controls, message: `${d.kind} applied to ${site}` },
      };
    }
  }

  /** Applies queued decisions and lets every handler finish (before continue-as-new or the end). */
  async function drain(): Promise<void> {
    for (;;) {
      await applyQueued();
      if (queue.length === 0 && allHandlersFinished()) return;
      await condition(() => queue.length > 0 || allHandlersFinished());
    }
  }

  async function waitForNextTick(): Promise<void> {
    for (;;) {
      // A decision wakes the loop at once; after it the interval starts again.
      const woken = await condition(() => queue.length > 0, config.tickIntervalMs, { summary: `next tick in ${seconds(config.tickIntervalMs)}` });
      if (!woken) return;
      await applyQueued();
      if (stopped !== null) return;
    }
  }

  async function finish(): Promise<SiteHealthSummary> {
    await drain();
    const s = stopped!;
    const previous = state.history[state.history.length - 1];
    return {
      site,
      outcome: 'stopped',
      stoppedBy: s.decision.who,
      why: s.decision.why,
      decidedAt: s.decidedAt,
      ticks: state.tick,
      runs: state.runs,
      firstAssessedAt: state.firstAssessedAt,
      lastAssessedAt: state.lastAssessedAt,
      finalBand: previous?.band ?? 'learning',
      finalScore: state.score,
      finalSmoothedScore: state.smoothedScore,
      finalParserHealth: state.parserHealth,
      reasons: state.reasons,
      bandTicks: state.bandTicks,
      decisions: inbox.seq,
      controls: state.controls,
    };
  }

  // --- The loop --------------------------------------------------------------------------------
  publish();
  for (;;) {
    await runTick();
    await applyQueued();
    if (stopped !== null) return finish();
    if (workflowInfo().continueAsNewSuggested || ticksThisRun >= config.maxTicksPerRun) {
      await drain();
      if (stopped !== null) return finish();
      // Everything the loop knows goes to the next run, a pending human wait included.
      const next = makeContinueAsNewFunc<typeof siteHealth>({ typedSearchAttributes: currentAttributes() });
      await next({ ...config, carried: { ...state, decisionSeq: inbox.seq, rejected: inbox.rejected } });
    }
    await waitForNextTick();
    if (stopped !== null) return finish();
  }
}
