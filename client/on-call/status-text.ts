/** `target-health status <site>` as text: the state, the latest tick explained, canaries, what happens next. */
import { formatCrawlerCanaries } from '../../core/canaries/latest';
import type { Controls } from '../../core/control/controls';
import type { SiteHealthState, TickSummary } from '../../loop/messages';
import { type BandCause, bandCause, bandLabel } from '../../core/control/band-wording';
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import { formatTickContext, scoreSentence, signalLines, type TickExplanation } from './explain';
import type { CanaryStatus, NextStep } from './status';
import type { Trend } from '../../server/fleet/trend';

const dash = (v: number | null): string => (v === null ? '—' : String(v));
/** `2026-12-01 11:58:00Z` from an ISO time. */
export const shortTime = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/** The controls line's text, as `status` and `explain` show it: `—` while the loop has set none. */
export function controlsText(c: Controls | null): string {
  if (c === null) return '—';
  const state = c.paused ? (c.canaryOnly ? 'PAUSED (canaries only)' : 'PAUSED') : 'running';
  return (
    `${state}, concurrency ${c.concurrencyLimit}, revisit ×${c.revisitMultiplier}, ` +
    `cost ×${c.effectiveCostMultiplier}`
  );
}

/**
 * What put a recent tick in its band. A tick of the current wait keeps the band the pause froze, and with it the
 * pause's cause: its own reasons (canary traffic) rarely name the rule again, and `98 / 97  resisting` alone reads
 * as a contradiction. `current`: what put the loop in its band now (statusBandCause).
 */
export function recentTickCause(
  t: Pick<TickSummary, 'band' | 'reasons' | 'assessedAt'>,
  state: Pick<SiteHealthState, 'band' | 'awaitingHuman'>,
  current: BandCause,
): BandCause {
  const w = state.awaitingHuman;
  return w !== null && t.band === state.band && Date.parse(t.assessedAt) >= Date.parse(w.since)
    ? current
    : bandCause(t.band, t.reasons);
}

export interface StatusView {
  state: SiteHealthState;
  history: readonly TickSummary[];
  explained: {
    tick: { tick: number; assessedAt: string } | null;
    latest: TickExplanation | null;
    unexplained: string | null;
    bandCause: BandCause;
    canaries: CanaryStatus;
    next: NextStep;
    trend: Trend;
  };
  link: string;
}

function canaryLines(c: CanaryStatus, waiting: boolean): string[] {
  // The crawlers' own canary requests count as evidence too, with or without canaries of the product's.
  const crawler = c.crawler !== null && c.crawler.requests > 0 ? formatCrawlerCanaries(c.crawler, c.crawler) : null;
  if (c.defined.length === 0) {
    if (crawler !== null) return [`canaries   none defined; ${crawler}`];
    return [
      `canaries   none defined${waiting ? ' — nothing shows whether the paused site calmed down' : ''} (see ` +
        `"next" for how to add one)`,
    ];
  }
  const latest = new Map(c.latest.map((r) => [r.canaryId, r]));
  const own = c.defined.map((id, i) => {
    const r = latest.get(id);
    return (
      `${i === 0 ? `canaries   ${c.defined.length} defined: ` : '           '}${id} ` +
      `${r === undefined ? 'not run yet' : `${r.result.toUpperCase()} at ${shortTime(r.ranAt)}: ${r.reason}`}`
    );
  });
  return crawler === null ? own : [...own, `           ${crawler}`];
}

export function formatStatus(v: StatusView): string {
  const { state } = v;
  const w = state.awaitingHuman;
  const d = state.lastDecision;
  const e = v.explained;
  // The nominal span, points × their width (the range read ends on a grid: docs/on-call.md).
  const span = formatDuration(e.trend.points.length * e.trend.bucketMs);
  const trend = e.trend.points.some((p) => p !== null)
    ? `${e.trend.sparkline}  (mean score per ${formatDuration(e.trend.bucketMs)} over the last ${span}, oldest first)`
    : `— (no scored tick in the last ${span})`;
  const scoreAlone = state.scoredBand !== state.band ? `; the score alone says ${state.scoredBand}` : '';
  const reminders = w === null ? '' : plural(w.remindersSent, 'reminder');
  const lines = [
    `site       ${state.site}`,
    `band       ${bandLabel(state.band, e.bandCause)}${scoreAlone}`,
    `score      ${dash(state.score)} (smoothed ${dash(state.smoothedScore)}), parser health ` +
      `${dash(state.parserHealth)}`,
    `trend      ${trend}`,
    ...(state.noScore === null || state.noScore === undefined ? [] : [`no score   ${state.noScore.detail}`]),
    ...(state.heldFor === null || state.heldFor === undefined ? [] : [`held       ${state.heldFor}`]),
    `reasons    ${state.reasons.length > 0 ? state.reasons.join(', ') : '—'}`,
    `controls   ${controlsText(state.controls)}`,
    `waiting    ${w === null ? 'no' : `YES since ${w.since} (${w.kind}: ${w.reason}); ${reminders}`}`,
    `decision   ${d === null ? '—' : `${d.kind} by ${d.who} at ${d.decidedAt}: ${d.why}`}`,
    `tick       ${state.tick} (every ${formatDuration(state.tickIntervalMs)}, run ${state.runs} of the chain), last ` +
      `${state.lastAssessedAt ?? 'not yet'}`,
  ];
  if (state.rejected.length > 0) lines.push(`refused    ${state.rejected[state.rejected.length - 1]}`);

  lines.push('');
  if (e.latest !== null && e.tick !== null) {
    lines.push(
      `signals at tick ${e.tick.tick} (${shortTime(e.tick.assessedAt)}), now vs the site's normal (95% intervals):`,
    );
    lines.push(...signalLines(e.latest));
    lines.push(`  score ${scoreSentence(e.latest)}`);
    for (const [label, text] of formatTickContext(e.latest).filter(([l]) => l === 'routes' || l === 'rules'))
      lines.push(`${label.padEnd(10)} ${text}`);
  } else {
    lines.push(
      `signals    — (${e.unexplained ?? 'no tick yet'})`,
      `routes     ${state.routeDiagnosis ? state.routeDiagnosis.summary : '—'}`,
    );
  }
  lines.push(...canaryLines(e.canaries, w !== null));
  const n = e.next;
  lines.push(`next       ${n.plan}`, `           why: ${n.why}`);
  if (n.nextTickAt !== null) lines.push(`           next tick due ${shortTime(n.nextTickAt)}`);
  n.commands.forEach((cmd, i) => lines.push(`           ${i === 0 ? 'run:' : '    '} ${cmd}`));

  if (v.history.length > 0) {
    const cause = (t: TickSummary): BandCause => recentTickCause(t, state, e.bandCause);
    lines.push('', 'recent ticks (score / smoothed, band, reasons, actions):');
    for (const t of v.history)
      lines.push(
        `  ${String(t.tick).padStart(5)}  ${dash(t.score).padStart(3)} / ${dash(t.smoothedScore).padStart(3)}  ` +
          `${bandLabel(t.band, cause(t)).padEnd(9)}  ${t.reasons.join(',') || '—'}  ${t.actions.join('; ')}`,
      );
  }
  lines.push('', v.link);
  return lines.join('\n') + '\n';
}
