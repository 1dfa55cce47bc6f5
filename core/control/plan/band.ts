/**
 * The band's part of a tick: controls and the owner's notifications.
 *   learning   nothing (the first tick writes the site's nominal controls);
 *   healthy    nothing; after a degradation restore steps until nominal;
 *   degrading  throttle steps while the band holds (floors), effective cost raised, route diagnosis
 *              recorded, owner notified on entry;
 *   resisting  pause, canaries only, owner notified with the evidence, then wait for a person. While
 *              waiting: keep assessing, remind, never act on its own.
 * Pace: a band entered takes one step at once, then one per `policy.steps.*EveryMs` of time in it,
 * whatever the tick interval.
 */
import type { HealthBand } from '../../common/names';
import type { SiteTick } from '../../scoring/site-state';
import {
  type Controls,
  changedFields,
  degradeStep,
  describeChange,
  isThrottled,
  meaningfulCost,
  nominalControls,
  pausedControls,
  restoreStep,
} from '../controls';
import { bandLine, describeSignals, scoreLine } from '../notices';
import { bandPhrase } from '../band-wording';
import { formatDuration } from '../../common/durations';
import { plural } from '../../common/plural';
import type { TickAssessment } from '../tick-assessment';
import type { LoopConfig, TickDraft } from './types';

function bandReason(
  band: HealthBand,
  t: TickAssessment,
  smoothed: number | null,
  config: LoopConfig,
  heldForRoutes: boolean,
): string {
  const a = t.assessment;
  // The band, the rule or score that put it there, and the scores: the wording every surface shares.
  const phrase = bandPhrase({ band, reasons: a.reasons, score: a.health.score, smoothedScore: smoothed });
  const reasons = a.reasons.length > 0 ? `reasons ${a.reasons.join(', ')}` : 'no reasons';
  // Why there is no score: too little current traffic is not learning.
  let held =
    a.state === 'insufficient-data'
      ? `; band held, too little current traffic (${plural(a.health.window.requests, 'request')}, needs ` +
        `${config.scoring.health.minRequests})`
      : '';
  // Held while the routes that pull the score down are being confirmed.
  if (heldForRoutes) held += `; ${routeHoldText(t) ?? ''}`;
  switch (band) {
    case 'learning':
      return `learning: ${a.baseline.detail ?? 'baseline still learning'}`;
    case 'healthy':
      return `${phrase}${held}`;
    case 'degrading':
      return `${phrase}; ${reasons}; routes: ${a.routes.verdict}${held}`;
    case 'resisting':
      return `${phrase}; ${reasons}${held}`;
    case 'stopped':
      return phrase;
  }
}

/** `band held while pool c is confirmed as a route problem (score 100 without it)`, or null without a hold. */
export function routeHoldText(t: TickAssessment): string | null {
  const hold = t.assessment.routeHold ?? null;
  if (hold === null) return null;
  const one = hold.routes.length === 1;
  const routes =
    hold.routes.length > 3
      ? `${hold.routes.slice(0, 3).join(', ')} and ${hold.routes.length - 3} more`
      : hold.routes.join(', ');
  return (
    `band held while ${routes} ${one ? 'is' : 'are'} confirmed as a route problem (score ${hold.score} without ` +
    `${one ? 'it' : 'them'})`
  );
}

/** How many steps the band takes this tick, and the time carried towards the next one. */
interface Pace {
  steps: number;
  creditMs: number;
}

/**
 * Entering the band steps at once; while it holds, each tick adds its time (at most one tick interval:
 * a late loop does not catch up on missed slots) and a step is taken per `everyMs` accumulated — so
 * 10 s and 60 s ticks throttle alike.
 */
function paceFor(band: HealthBand, d: TickDraft, config: LoopConfig): Pace {
  const { steps } = config.policy;
  const everyMs = band === 'degrading' ? steps.degradeEveryMs : band === 'healthy' ? steps.restoreEveryMs : null;
  if (everyMs === null) return { steps: 0, creditMs: 0 };
  if (d.prev.band !== band) return { steps: 1, creditMs: 0 };
  const credit = d.prev.stepCreditMs + Math.min(d.elapsedMs, config.tickIntervalMs);
  const due = Math.floor(credit / everyMs);
  return { steps: due, creditMs: credit - due * everyMs };
}

/** The band's controls for this tick, from the current ones (null: the site has none yet). */
function bandControls(
  band: HealthBand,
  current: Controls | null,
  config: LoopConfig,
  costMultiplier: number,
  reason: string,
  pace: Pace,
): { next: Controls; creditMs: number } {
  const { policy } = config;
  const base = current ?? nominalControls(policy, band, reason);
  switch (band) {
    case 'healthy': {
      if (current === null || !isThrottled(current, policy)) return { next: { ...base, band, reason }, creditMs: 0 };
      let next: Controls = { ...current, band, reason };
      for (let i = 0; i < pace.steps && isThrottled(next, policy); i += 1) next = restoreStep(next, policy, reason);
      // Back at the usual pace: nothing left to restore, no time to carry.
      return { next, creditMs: isThrottled(next, policy) ? pace.creditMs : 0 };
    }
    case 'degrading': {
      // A band entered this tick gets its first step now; a band that holds gets more as they fall due.
      let next: Controls = { ...base, band, reason };
      for (let i = 0; i < pace.steps; i += 1) {
        next = degradeStep(next, policy, meaningfulCost(next.effectiveCostMultiplier, costMultiplier, policy), reason);
      }
      return { next, creditMs: pace.creditMs };
    }
    case 'resisting':
      return { next: pausedControls(base, 'resisting', reason), creditMs: 0 };
    case 'learning':
    case 'stopped':
      return { next: { ...base, band, reason }, creditMs: 0 };
  }
}

/** Paused and waiting for a person: keep watching (canary traffic), remind, never act alone. */
export function planWhileAwaiting(d: TickDraft, config: LoopConfig): void {
  const waiting = d.prev.awaiting;
  if (waiting === null) return;
  const sinceLast = Date.parse(d.t.assessedAt) - Date.parse(waiting.lastNotifiedAt);
  if (sinceLast < config.policy.reminderIntervalMs) return;
  const remindersSent = waiting.remindersSent + 1;
  const site = config.site;
  d.state.awaiting = { ...waiting, remindersSent, lastNotifiedAt: d.t.assessedAt };
  d.notices.push((e) => ({
    kind: 'reminder',
    severity: 'critical',
    audience: 'owner',
    title: `Reminder ${remindersSent}: ${site} is paused (since ${waiting.since}) and waiting for your decision`,
    text:
      `${waiting.reason}. Now: ${scoreLine(e)}; ${describeSignals(e.signals)}. Decide with \`target-health ` +
      `decide resume|stop ${site} --who … --why …\`.`,
    evidence: e,
  }));
  d.actions.push(`reminder ${remindersSent}`);
}

/** Not waiting: the scored band sets the controls, and entering degrading or resisting tells the owner. */
export function planBand(d: TickDraft, step: SiteTick, config: LoopConfig): void {
  const { prev, t } = d;
  const a = t.assessment;
  const { policy, site } = config;
  const band = step.band;
  const reason = bandReason(band, t, step.smoothedScore, config, step.heldForRoutes === true);
  // Steps need fresh evidence: a tick without a score (too few requests, e.g. because the site is
  // throttled) holds the controls instead of throttling further on what it no longer sees — and adds
  // no time towards the next step.
  // So does a tick held while routes are being confirmed (its score is the routes' doing).
  const noEvidence = a.health.score === null || step.heldForRoutes === true;
  const hold =
    prev.controls !== null &&
    band === prev.band &&
    noEvidence &&
    !a.totalRefusal.totalRefusal &&
    a.majorityRefusal?.majorityRefusal !== true;
  const planned =
    hold && prev.controls !== null
      ? { next: prev.controls, creditMs: prev.stepCreditMs }
      : bandControls(band, prev.controls, config, step.effectiveCostMultiplier, reason, paceFor(band, d, config));
  const next = planned.next;
  d.state.band = band;
  d.state.stepCreditMs = planned.creditMs;
  d.state.heldFor = step.heldForRoutes === true ? routeHoldText(t) : null;
  if (d.state.heldFor !== null && prev.heldFor === null) d.actions.push(d.state.heldFor);
  if (changedFields(prev.controls, next).length > 0) {
    const description = describeChange(prev.controls, next);
    d.change = { next, description, routeDiagnosis: band === 'degrading' ? a.routes : null };
    d.state.controls = next;
    d.actions.push(description);
  }
  const changed = d.change?.description ?? 'unchanged';
  const reasons = a.reasons.join(', ') || 'none';

  if (band === 'degrading' && prev.band !== 'degrading') {
    d.notices.push((e) => ({
      kind: 'degrading',
      severity: 'warning',
      audience: 'owner',
      title: `${site} is ${bandLine(e)}`,
      text:
        `Reasons: ${reasons}. ${describeSignals(e.signals)}. Routes: ${a.routes.summary}. Controls: ${changed}; ` +
        `one step more every ${formatDuration(policy.steps.degradeEveryMs)} while the band holds.`,
      evidence: e,
    }));
    d.actions.push('notified owner (degrading)');
  }
  if (band === 'resisting') {
    d.state.awaiting = {
      kind: 'resisting',
      since: t.assessedAt,
      reason: `paused at tick ${t.tick}: ${reason}`,
      pausedBy: null,
      assessmentKey: t.assessmentKey,
      remindersSent: 0,
      lastNotifiedAt: t.assessedAt,
    };
    d.notices.push((e) => ({
      kind: 'resisting',
      severity: 'critical',
      audience: 'owner',
      title: `${site} is ${bandLine(e)} — canaries only, waiting for your decision`,
      text:
        `Reasons: ${reasons}. ${describeSignals(e.signals)}. Routes: ${a.routes.summary}. ` +
        `Nothing more happens automatically. Decide: resume (cautious, or explicit concurrency/revisit) or stop — ` +
        (`\`target-health decide resume ${site} --who … --why …\` or \`target-health decide stop ${site} --who ` +
          `… --why …\`.`),
      evidence: e,
    }));
    d.actions.push('paused; notified owner (resisting)');
  }
}
