/**
 * The band's part of a tick: controls and the owner's notifications.
 *   learning   nothing (the first tick writes the site's nominal controls);
 *   healthy    nothing; after a degradation one restore step per tick until nominal;
 *   degrading  one throttle step per tick while the band holds (floors), effective cost raised, route
 *              diagnosis recorded, owner notified on entry;
 *   resisting  pause, canaries only, owner notified with the evidence, then wait for a person. While
 *              waiting: keep assessing, remind, never act on its own.
 */
import type { HealthBand } from '../../common/names';
import type { SiteTick } from '../../scoring/site-state';
import { type ActionPolicy, type Controls, changedFields, degradeStep, describeChange, isThrottled, nominalControls, pausedControls, restoreStep } from '../controls';
import { describeSignals, scoreLine } from '../notices';
import type { TickAssessment } from '../tick-assessment';
import type { LoopConfig, TickDraft } from './types';

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
    text: `${waiting.reason}. Now: ${scoreLine(e)}; ${describeSignals(e.signals)}. Decide with \`target-health decide resume|stop ${site} --who … --why …\`.`,
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
  const reason = bandReason(band, t, step.smoothedScore);
  // Steps need fresh evidence: a tick without a score (too few requests, e.g. because the site is
  // throttled) holds the controls instead of throttling further on what it no longer sees.
  const hold = prev.controls !== null && band === prev.band && a.health.score === null && !a.totalRefusal.totalRefusal;
  const next = hold && prev.controls !== null ? prev.controls : bandControls(band, prev.controls, policy, step.effectiveCostMultiplier, reason);
  d.state.band = band;
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
      title: `${site} is degrading (${scoreLine(e)}): throttling`,
      text: `Reasons: ${reasons}. ${describeSignals(e.signals)}. Routes: ${a.routes.summary}. Controls: ${changed}; one step more each tick while the band holds.`,
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
      title: `${site} is resisting (${scoreLine(e)}): paused, canaries only — waiting for your decision`,
      text:
        `Reasons: ${reasons}. ${describeSignals(e.signals)}. Routes: ${a.routes.summary}. ` +
        `Nothing more happens automatically. Decide: resume (cautious, or explicit concurrency/revisit) or stop — ` +
        `\`target-health decide resume ${site} --who … --why …\` or \`target-health decide stop ${site} --who … --why …\`.`,
      evidence: e,
    }));
    d.actions.push('paused; notified owner (resisting)');
  }
}
