/**
 * One tick of the control loop, as a pure function: the previous loop state and this tick's assessment
 * in, the next state, the controls to write (if any) and the notifications to send out. The workflow
 * runs activities for the side effects; everything decided lives here, where it is unit-tested and
 * replays identically.
 *
 * Band actions (SPEC.md "Bands and actions"; docs/control-loop.md):
 *   learning   nothing (the first tick writes the site's nominal controls);
 *   healthy    nothing; after a degradation one restore step per tick until nominal;
 *   degrading  one throttle step per tick while the band holds (floors), effective cost raised, route
 *              diagnosis recorded, owner notified on entry;
 *   resisting  pause, canaries only, owner notified with the evidence, then wait for a person. While
 *              waiting: keep assessing, remind, never act on its own.
 * Independently of the band: parser health below its threshold notifies the parser's owner (no
 * throttling), and route-specific failures notify the owner as a route alert.
 */
import type { HealthBand } from '../../common/names';
import type { ScoringConfig } from '../../scoring/config';
import type { RouteDiagnosis } from '../../scoring/route-diagnosis';
import { applyCanaryFloorToTick, DEFAULT_CANARY_POLICY, type CanaryPolicy } from '../../canaries/band-floor';
import { advanceSiteState } from '../../scoring/site-state';
import {
  type ActionPolicy,
  type Controls,
  PARSER_ALERT_HYSTERESIS,
  changedFields,
  degradeStep,
  describeChange,
  isThrottled,
  nominalControls,
  pausedControls,
  restoreStep,
} from './controls';
import { HISTORY_LIMIT, type LoopState, type TickSummary, pushBounded } from './loop-state';
import { type Evidence, type NoticeDraft, buildEvidence, describeSignals, scoreLine } from './notices';
import type { TickAssessment } from './tick-assessment';

export interface LoopConfig {
  site: string;
  policy: ActionPolicy;
  scoring: ScoringConfig;
  /** What a canary mismatch does to the band and the reasons (default: at least degrading, first reason). */
  canary?: CanaryPolicy;
}

export interface ControlChange {
  next: Controls;
  /** `concurrency 12→9, revisit ×1.5→×2.25`. */
  description: string;
  /** Recorded with the change on degrading ticks (which routes fail, or that it is site-wide). */
  routeDiagnosis: RouteDiagnosis | null;
}

export interface TickPlan {
  state: LoopState;
  change: ControlChange | null;
  notices: NoticeDraft[];
}

function elapsedMs(from: string | null, to: string): number {
  if (from === null) return 0;
  // Database times; a clock step backwards must not make smoothing throw.
  return Math.max(0, Date.parse(to) - Date.parse(from));
}

function bandReason(band: HealthBand, t: TickAssessment, smoothed: number | null): string {
  const a = t.assessment;
  const reasons = a.reasons.length > 0 ? a.reasons.join(', ') : 'no reasons';
  const score = `score ${a.health.score ?? '—'}${smoothed === null ? '' : `, smoothed ${smoothed}`}`;
  switch (band) {
    case 'learning':
      return `learning: ${a.baseline.detail ?? 'baseline still learning'}`;
    case 'healthy':
      return `healthy (${score})`;
    case 'degrading':
      return `degrading (${score}): ${reasons}; routes: ${a.routes.verdict}`;
    case 'resisting':
      return `resisting (${score}): ${reasons}`;
    case 'stopped':
      return 'stopped';
  }
}

/** The band's controls for this tick, from the current ones (null: the site has none yet). */
function bandControls(band: HealthBand, current: Controls | null, policy: ActionPolicy, costMultiplier: number, reason: string): Controls {
  const base = current ?? nominalControls(policy, band, reason);
  switch (band) {
    case 'healthy':
      return current !== null && isThrottled(current, policy) ? restoreStep(current, policy, reason) : { ...base, band, reason };
    case 'degrading':
      // A band entered this tick gets its first step now; a band that holds gets one more.
      return degradeStep(base, policy, costMultiplier, reason);
    case 'resisting':
      return pausedControls(base, 'resisting', reason);
    case 'learning':
    case 'stopped':
      return { ...base, band, reason };
  }
}

type NoticeFor = (evidence: Evidence) => NoticeDraft;

export function planTick(prev: LoopState, assessed: TickAssessment, config: LoopConfig): TickPlan {
  const { policy, site } = config;
  // A canary returning a normal-looking page with the wrong value is the most serious finding: by
  // policy it puts the site in at least the degrading band and heads the reasons (canaries/band-floor.ts).
  const raw = assessed.assessment;
  const scored = advanceSiteState(prev.scoring, raw, elapsedMs(prev.lastAssessedAt, assessed.assessedAt), config.scoring);
  const floored = applyCanaryFloorToTick(prev.scoring, scored, raw, config.canary ?? DEFAULT_CANARY_POLICY);
  const step = floored.tick;
  // From here on the reasons are the floored ones (a mismatch first), for state, notices and history.
  const a = { ...raw, reasons: floored.reasons };
  const t: TickAssessment = { ...assessed, assessment: a };
  const state: LoopState = {
    ...prev,
    tick: t.tick,
    scoring: step.state,
    lastAssessedAt: t.assessedAt,
    lastAssessmentKey: t.assessmentKey,
    scoredBand: step.band,
    score: a.health.score,
    smoothedScore: step.smoothedScore,
    parserHealth: a.parser.score,
    reasons: [...a.reasons],
    firstAssessedAt: prev.firstAssessedAt ?? t.assessedAt,
  };
  // Decide first, word the notifications last: their evidence then includes this tick.
  const notices: NoticeFor[] = [];
  const actions: string[] = [];
  let change: ControlChange | null = null;
  const reasons = a.reasons.join(', ') || 'none';

  if (prev.awaiting !== null) {
    // Paused and waiting for a person: keep watching (canary traffic), remind, never act alone.
    const sinceLast = Date.parse(t.assessedAt) - Date.parse(prev.awaiting.lastNotifiedAt);
    if (sinceLast >= policy.reminderIntervalMs) {
      const waiting = prev.awaiting;
      const remindersSent = waiting.remindersSent + 1;
      state.awaiting = { ...waiting, remindersSent, lastNotifiedAt: t.assessedAt };
      notices.push((e) => ({
        kind: 'reminder',
        severity: 'critical',
        audience: 'owner',
        title: `Reminder ${remindersSent}: ${site} is paused (since ${waiting.since}) and waiting for your decision`,
        text: `${waiting.reason}. Now: ${scoreLine(e)}; ${describeSignals(e.signals)}. Decide with \`target-health decide resume|stop ${site} --who … --why …\`.`,
        evidence: e,
      }));
      actions.push(`reminder ${remindersSent}`);
    }
  } else {
    const band = step.band;
    const reason = bandReason(band, t, step.smoothedScore);
    // Steps need fresh evidence: a tick without a score (too few requests, e.g. because the site is
    // throttled) holds the controls instead of throttling further on what it no longer sees.
    const hold = prev.controls !== null && band === prev.band && a.health.score === null && !a.totalRefusal.totalRefusal;
    const next = hold && prev.controls !== null ? prev.controls : bandControls(band, prev.controls, policy, step.effectiveCostMultiplier, reason);
    state.band = band;
    if (changedFields(prev.controls, next).length > 0) {
      const description = describeChange(prev.controls, next);
      change = { next, description, routeDiagnosis: band === 'degrading' ? a.routes : null };
      state.controls = next;
      actions.push(description);
    }
    const changed = change?.description ?? 'unchanged';

    if (band === 'degrading' && prev.band !== 'degrading') {
      notices.push((e) => ({
        kind: 'degrading',
        severity: 'warning',
        audience: 'owner',
        title: `${site} is degrading (${scoreLine(e)}): throttling`,
        text: `Reasons: ${reasons}. ${describeSignals(e.signals)}. Routes: ${a.routes.summary}. Controls: ${changed}; one step more each tick while the band holds.`,
        evidence: e,
      }));
      actions.push('notified owner (degrading)');
    }
    if (band === 'resisting') {
      state.awaiting = {
        kind: 'resisting',
        since: t.assessedAt,
        reason: `paused at tick ${t.tick}: ${reason}`,
        pausedBy: null,
        assessmentKey: t.assessmentKey,
        remindersSent: 0,
        lastNotifiedAt: t.assessedAt,
      };
      notices.push((e) => ({
        kind: 'resisting',
        severity: 'critical',
        audience: 'owner',
        title: `${site} is resisting (${scoreLine(e)}): paused, canaries only — waiting for your decision`,
        text:
          `Reasons: ${reasons}. ${describeSignals(e.signals)}. Routes: ${a.routes.summary}. ` +
          `Nothing more happens automatically. Decide: resume (cautious, or explicit concurrency/revisit) or stop — ` +
          `\`target-health decide resume ${site} --who … --why …\` or \`target-health decide stop ${site} --who … --why …\`.`,
        evidence: e,
      }));
      actions.push('paused; notified owner (resisting)');
    }
  }

  // Parser health is the parser owner's business: an alert, never a throttle.
  const parser = a.parser.score;
  if (parser !== null) {
    if (!prev.alerts.parser && parser < policy.parserAlertBelow) {
      state.alerts = { ...state.alerts, parser: true };
      const failing = a.parser.reasons.filter((r) => r.startsWith('extraction_')).join(', ') || 'see evidence';
      notices.push((e) => ({
        kind: 'parser_health',
        severity: 'warning',
        audience: 'parser_owner',
        title: `${site}: parser health ${parser} (below ${policy.parserAlertBelow})`,
        text: `Extraction fails more than usual: ${failing}. ${describeSignals(e.signals.filter((s) => s.signal.startsWith('extraction_')))}. The site is not throttled for this (health score ${a.health.score ?? 'absent'}).`,
        evidence: e,
      }));
      actions.push('notified parser owner');
    } else if (prev.alerts.parser && parser >= policy.parserAlertBelow + PARSER_ALERT_HYSTERESIS) {
      state.alerts = { ...state.alerts, parser: false };
    }
  }

  // A route problem is reported, and kept out of the site's score (scoring/route-diagnosis.ts).
  if (policy.routeAlerts) {
    if (a.routes.verdict === 'route-specific' && !prev.alerts.route) {
      state.alerts = { ...state.alerts, route: true };
      notices.push((e) => ({
        kind: 'route_alert',
        severity: 'warning',
        audience: 'owner',
        title: `${site}: route problem — ${a.routes.summary}`,
        text: `Failures concentrate in some routes; that traffic is left out of the site's score (${scoreLine(e)}, band ${e.band}). Check the proxy routes, not the site.`,
        evidence: e,
      }));
      actions.push('route alert');
    } else if (a.routes.verdict === 'site-wide' && prev.alerts.route) {
      state.alerts = { ...state.alerts, route: false };
    }
  }

  const summary: TickSummary = {
    tick: t.tick,
    assessedAt: t.assessedAt,
    state: a.state,
    score: a.health.score,
    smoothedScore: step.smoothedScore,
    band: state.band,
    scoredBand: step.band,
    parserHealth: parser,
    reasons: [...a.reasons],
    routeVerdict: a.routes.verdict,
    actions,
  };
  state.history = pushBounded(prev.history, summary, HISTORY_LIMIT);
  state.bandTicks = { ...prev.bandTicks, [state.band]: prev.bandTicks[state.band] + 1 };
  const evidence = notices.length > 0 ? buildEvidence(state, t) : null;
  return { state, change, notices: evidence === null ? [] : notices.map((n) => n(evidence)) };
}
