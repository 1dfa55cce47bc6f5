/**
 * The review's tables as rows of cells (pure): the Markdown (./render.ts) and the console's Review page
 * (client/console/pages/review.ts) show the same columns with the same wording. A time cell is given to `time`,
 * so the Markdown writes it as text and the page as `<time datetime>`.
 */
import { alertLine } from '../../core/control/alerts';
import { bandLabel } from '../../core/control/band-wording';
import { formatDuration } from '../../core/common/durations';
import { perMinute, relative, spanText } from './words';
import type { MilestoneJson, Review } from './schema';

export type Cell<T> = string | T;

export const TIMELINE_HEADER = ['Time', 'Band', 'By', 'Score / smoothed', 'Tick reasons', 'Why'] as const;

export function timelineRows<T>(r: Pick<Review, 'timeline'>, time: (iso: string) => T): Cell<T>[][] {
  return r.timeline.map((b) => [
    time(b.at),
    `${b.from ?? '—'} → ${bandLabel(b.to, b.cause)}`,
    b.actor,
    `${b.score === null ? '—' : String(b.score)} / ${b.smoothedScore === null ? '—' : String(b.smoothedScore)}`,
    b.reasons.join(', '),
    b.reason,
  ]);
}

export const ALERT_HEADER = ['Time', 'From the onset', 'Alert'] as const;

export function alertRows<T>(r: Pick<Review, 'alerts' | 'early'>, time: (iso: string) => T): Cell<T>[][] {
  const onset = r.early.onset === null ? null : Date.parse(r.early.onset.at);
  return r.alerts.map((a) => [
    time(a.at),
    onset === null ? '—' : (relative(Date.parse(a.at) - onset, 'the onset') ?? '—'),
    alertLine(a),
  ]);
}

export const MILESTONE_HEADER = ['Moment', 'Time', 'After the onset', 'Against refusals passing half'] as const;

/** The incident's moments from its onset: first sign, first evidence, first degrade, first pause. */
export function milestoneRows<T>(r: Pick<Review, 'early'>, time: (iso: string) => T): Cell<T>[][] {
  const e = r.early;
  const rows: [string, MilestoneJson | null][] = [
    [`First tick naming ${e.reasons.join(' or ') || 'a reason of the incident'}`, e.firstSign],
    [`First tick with the evidence (${e.reasons.join(', ') || '—'})`, e.firstEvidence],
    ['First degrade (warning)', e.firstDegrade],
    ['First pause', e.firstPause],
  ];
  return rows.map(([name, m]) => [
    name,
    m === null ? 'never' : time(m.at),
    m === null ? '—' : (relative(m.afterOnsetMs, 'the onset') ?? '—'),
    m === null ? '—' : (relative(m.afterHalfMs, 'refusals passed half') ?? '— (never passed half)'),
  ]);
}

export const ACTION_HEADER = [
  'From',
  'To',
  'Action',
  'Steps',
  'By',
  'Change',
  'Refusals before → after',
  'Requests/min before → after',
  'Did it help',
  'Why',
] as const;

export function actionRows<T>(r: Pick<Review, 'actions'>, time: (iso: string) => T): Cell<T>[][] {
  return r.actions.map((a) => [
    time(a.from),
    time(a.to),
    a.kind,
    String(a.steps),
    a.actor,
    a.change,
    `${spanText(a.before)} → ${spanText(a.after)}`,
    `${perMinute(a.before)} → ${perMinute(a.after)}`,
    a.effect.verdict,
    a.reason,
  ]);
}

export const DECISION_HEADER = ['Time', 'Who', 'Decision', 'Mode', 'Waited for a person', 'Why'] as const;

export function decisionRows<T>(r: Pick<Review, 'decisions'>, time: (iso: string) => T): Cell<T>[][] {
  return r.decisions.map((d) => [
    time(d.at),
    d.who,
    d.kind,
    d.mode ?? '—',
    d.waitedMs === null ? '—' : formatDuration(d.waitedMs),
    d.why,
  ]);
}
