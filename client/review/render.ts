/**
 * A review as Markdown (pure): summary, timeline of band changes, lead time, actions and their effect on
 * refusals, decisions, the chart, what to tune. Every figure comes from the review document
 * (client/review/schema.ts); nothing is computed here beyond formatting.
 */
import { sourceLine } from '../loop-record/source';
import { formatCrawlerCanaries } from '../../core/canaries/latest';
import { ACTION_SPAN_MS } from './actions';
import { PEAK_SHARE, PEAK_WINDOW_MS } from './refusals';
import type { CandidateFigures, QuietFigures, Review, RunFigures, Tuning } from './schema';
import { PAUSE_DUE_MS } from './onset';
import { alertLine } from '../../core/control/alerts';
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import {
  ACTION_HEADER,
  actionRows,
  ALERT_HEADER,
  alertRows,
  DECISION_HEADER,
  decisionRows,
  MILESTONE_HEADER,
  milestoneRows,
  TIMELINE_HEADER,
  timelineRows,
} from './rows';
import { againstOnset, leadText, percent, relative, spanText, when } from './words';

/** A table cell: pipes escaped, one line. */
export function cell(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').trim() || '—';
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ];
}

/** `1 tick differs`, `3 ticks differ`. */
const ticksDiffer = (n: number): string => `${plural(n, 'tick')} ${n === 1 ? 'differs' : 'differ'}`;

/** One line: the onset and when the loop paused (or warned) after it; `em` marks a late pause (Markdown's bold). */
export function earlyLine(r: Pick<Review, 'early'>, em: (s: string) => string = (s) => `**${s}**`): string {
  const e = r.early;
  if (e.onset === null) return '— (the traffic never left its normal near the first warning)';
  const onset = `onset at ${when(e.onset.at)} (${e.onset.signal} left normal)`;
  if (e.firstPause !== null)
    return `${onset}; paused ${againstOnset(e.firstPause)}${e.pauseLate ? ` — ${em('late')}` : ''}`;
  if (e.firstDegrade !== null) return `${onset}; first warning ${againstOnset(e.firstDegrade)}; never paused`;
  return `${onset}; no warning`;
}

function summary(r: Review): string[] {
  const w = r.window;
  const peak = r.refusals.peak;
  const lead =
    r.lead === null
      ? '— (no warning band change or no refusal peak in the window)'
      : `first warning at ${when(r.lead.firstWarningAt)}, ${leadText(r.lead.ms)}`;
  return [
    '## Summary',
    '',
    `- **Site:** ${r.site}`,
    ...(r.source.kind === 'stored' ? [] : [`- **Ticks:** ${sourceLine(r.source)}`]),
    `- **Window:** ${when(w.from)} → ` +
      `${when(w.to)}${w.openStart ? ' (already away from healthy at the start of the search: it began earlier)' : ''}` +
      `${w.openEnd ? ' (not back to healthy by the end of the search)' : ''}`,
    `- **Duration:** ${formatDuration(w.durationMs)}`,
    `- **Worst band:** ${r.worstBand}`,
    `- **Ticks ${r.source.kind === 'stored' ? 'stored' : 'replayed'}:** ${r.ticks}`,
    peak === null
      ? `- **Peak refusal rate:** — (no ${formatDuration(PEAK_WINDOW_MS)} span with enough traffic)`
      : `- **Peak refusal rate:** ${percent(peak.rate)} over ${formatDuration(PEAK_WINDOW_MS)} at ${when(peak.at)}; ` +
        `refusals peaked (first reached ${Math.round(PEAK_SHARE * 100)} % of it) at ${when(peak.reachedAt)}`,
    `- **Refusals over the window:** ${spanText(r.refusals.during)} (${r.refusals.level} rollups, all routes)`,
    `- **From the onset:** ${earlyLine(r)}`,
    `- **Lead time to the peak:** ${lead}`,
    `- **Alerts beside the band's reasons:** ${
      r.alerts.length === 0 ? 'none (no route or parser alert)' : r.alerts.map(alertLine).join('; ')
    }`,
  ];
}

function timeline(r: Review): string[] {
  if (r.timeline.length === 0)
    return [
      '## Timeline of band changes',
      '',
      'No band change inside the window (the band was already away from healthy when the search began).',
    ];
  return ['## Timeline of band changes', '', ...table(TIMELINE_HEADER, timelineRows(r, when)), '', ...alerts(r)];
}

/** The route and parser alerts of the incident beside the band's reasons: a reason the band does not carry. */
function alerts(r: Review): string[] {
  if (r.alerts.length === 0)
    return ["No route or parser alert during the incident: the band's reasons are the whole explanation."];
  return [
    "Alerts beside the band's reasons (a route alert's traffic is left out of the score; a parser alert is the " +
      "parser owner's):",
    '',
    ...table(ALERT_HEADER, alertRows(r, when)),
  ];
}

/** Did the score move early enough: the milestones from the onset. */
function fromOnset(r: Review): string[] {
  const e = r.early;
  const out: string[] = [];
  if (e.onset === null) {
    out.push(
      'The traffic never left its normal near the first warning (no 5-minute span with enough requests refused ' +
        '5 points above normal or p95 latency 1.5× normal): there is no onset to measure from.',
    );
  } else {
    const normal = [
      e.normal.refusalShare === null ? null : `${percent(e.normal.refusalShare)} refused`,
      e.normal.p95LatencyMs === null ? null : `p95 ${Math.round(e.normal.p95LatencyMs)} ms`,
    ].filter((x): x is string => x !== null);
    out.push(
      `**Onset:** ${when(e.onset.at)}, the first minute ${e.onset.signal} left the site's normal ` +
        `(${normal.join(', ') || 'no baseline: judged against none refused'}) in the stretch leading into the ` +
        `first warning. Refusals passed half ${e.refusedHalfAt === null ? 'never' : `at ${when(e.refusedHalfAt)}`}.`,
    );
  }
  out.push('', ...table(MILESTONE_HEADER, milestoneRows(r, when)));
  if (e.firstPause !== null && e.onset !== null) {
    out.push(
      '',
      `The loop **paused ${againstOnset(e.firstPause)}**` +
        (e.pauseLate
          ? ` — **late**: a wall should pause within ${formatDuration(PAUSE_DUE_MS)} of refusals passing half.`
          : '.'),
    );
  }
  return out;
}

function lead(r: Review): string[] {
  const out = ['## Lead time', '', ...fromOnset(r), ''];
  if (r.lead === null) {
    out.push(
      r.refusals.peak === null
        ? 'Refusals never had enough traffic to measure a peak in the window.'
        : 'No change into degrading or resisting inside the window: nothing to measure the lead from.',
    );
  } else {
    out.push(
      `Against the peak: the first warning (a change into degrading or resisting) came at ` +
        `${when(r.lead.firstWarningAt)}; ` +
        `refusals peaked at ${when(r.lead.peakReachedAt)} — the warning came **${leadText(r.lead.ms)}**.`,
      '',
      `"Peaked" is the first minute the ${formatDuration(PEAK_WINDOW_MS)} refusal rate reached ` +
        `${Math.round(PEAK_SHARE * 100)} % of its highest value in the window ` +
        `(${percent(r.refusals.peak?.rate ?? null)}).`,
    );
  }
  return out;
}

function actions(r: Review): string[] {
  const out = ['## Actions taken and their effect', ''];
  if (r.actions.length === 0) return [...out, 'No control change inside the window.'];
  out.push(
    `Consecutive changes by the same actor into the same band are one action. Refusals and requests per minute ` +
      `over the ${formatDuration(ACTION_SPAN_MS)} before an action's first change and after its last (from the ` +
      `minute after it).`,
    '',
    ...table(ACTION_HEADER, actionRows(r, when)),
  );
  return out;
}

function decisions(r: Review): string[] {
  const out = ['## Who decided what and when', ''];
  if (r.decisions.length === 0) return [...out, "No person decided during the incident: every change was the loop's."];
  return [...out, ...table(DECISION_HEADER, decisionRows(r, when))];
}

/** What the canaries saw during the incident: the product's runs by result, and the crawlers' own canary requests. */
function canaries(r: Review): string[] {
  const p = r.canaries.product;
  const runs = p.pass + p.mismatch + p.blocked + p.error;
  const c = r.canaries.crawler;
  return [
    '## Canaries',
    '',
    runs === 0
      ? "No canary of the product's ran during the incident."
      : `The product's canaries ran ${plural(runs, 'time')}: ${p.pass} pass, ${p.mismatch} mismatch, ${p.blocked} ` +
        `blocked, ${p.error} error.`,
    c.requests === 0
      ? 'The crawler sent no canary requests (`canary: true`) during the incident.'
      : `During the incident, ${formatCrawlerCanaries(c)}.`,
  ];
}

function chart(r: Review): string[] {
  return [
    '## Chart',
    '',
    r.chart.file === null
      ? r.chart.note
      : `![${r.site}: score, errors, refusals and actions around the incident](${encodeURI(r.chart.file)})`,
    ...(r.chart.file === null ? [] : ['', r.chart.note]),
  ];
}

export const FIGURES_HEADER = [
  'Settings',
  'First warning',
  'After the onset',
  'First pause',
  'Paused after the onset',
  'Lead',
  'Throttled ticks',
  'Ticks degrading/resisting',
  'Notices',
  'Ticks that differ',
  'Of those, in band, reasons, controls or notices',
] as const;

/** Each setting's run over the incident, the current settings first (FIGURES_HEADER's columns). */
export function figuresRows(t: Tuning): string[][] {
  return [
    figuresRow(t.current, ['—', '—']),
    ...t.candidates.map((c) => figuresRow(c, [String(c.differences), String(c.importantDifferences)])),
  ];
}

/** `differs`: ticks that differ from the current settings' replay at all, and in what an operator acts on. */
function figuresRow(f: RunFigures, differs: readonly [string, string]): string[] {
  return [
    f.name,
    when(f.firstDegradeAt),
    relative(f.warnAfterOnsetMs, 'the onset') ?? '—',
    when(f.firstPauseAt),
    relative(f.pauseAfterOnsetMs, 'the onset') ?? '—',
    f.leadMs === null ? '—' : leadText(f.leadMs).replace(' refusals peaked', ''),
    String(f.throttledTicks),
    String(f.warningTicks),
    String(f.notices),
    ...differs,
  ];
}

function candidateLine(c: CandidateFigures): string {
  return `- **${c.name}** — ${c.description}: ${candidateVerdict(c)}.`;
}

/** What a candidate would have done against the current settings, in words (no comparison: why not). */
export function candidateVerdict(c: CandidateFigures): string {
  if (c.noComparison !== null) return c.noComparison;
  const warn =
    c.firstDegradeAt === null
      ? 'would not have warned'
      : c.earlierByMs === null
        ? 'would have warned (the current settings did not)'
        : c.earlierByMs === 0
          ? 'would have warned at the same tick'
          : c.earlierByMs > 0
            ? `would have warned ${formatDuration(c.earlierByMs)} earlier`
            : `would have warned ${formatDuration(-c.earlierByMs)} later`;
  const throttle =
    c.throttledLess === 0
      ? 'throttled as many ticks'
      : c.throttledLess > 0
        ? `throttled ${plural(c.throttledLess, 'tick')} fewer`
        : `throttled ${plural(-c.throttledLess, 'tick')} more`;
  const quiet =
    c.quiet === null
      ? ''
      : `; on the quiet days ${plural(c.quiet.addedDegrades, 'false degrade')} and ` +
        `${plural(c.quiet.addedPauses, 'pause')} more than the current settings`;
  return (
    `${warn} and ${throttle}; ${ticksDiffer(c.importantDifferences)} in band, reasons, controls or notices` + quiet
  );
}

export const quietDayText = (d: Tuning['quietDays']['days'][number]): string =>
  `${d.day} (quiet ${d.judgedBy === 'live' ? 'live' : 'in the replay'})`;

export const QUIET_HEADER = [
  'Settings',
  'Degrades',
  'Pauses',
  'Throttled ticks',
  'Degrades added',
  'Pauses added',
] as const;

/** Each setting's false alarms over the quiet days (QUIET_HEADER's columns), the current settings' first. */
export function quietRows(t: Tuning, current: QuietFigures): string[][] {
  const added = (n: number): string => (n > 0 ? `+${n}` : String(n));
  return [
    [t.current.name, String(current.degrades), String(current.pauses), String(current.throttledTicks), '—', '—'],
    ...t.candidates.map((c) =>
      c.quiet === null
        ? [c.name, '—', '—', '—', '—', '—']
        : [
            c.name,
            String(c.quiet.degrades),
            String(c.quiet.pauses),
            String(c.quiet.throttledTicks),
            added(c.quiet.addedDegrades),
            added(c.quiet.addedPauses),
          ],
    ),
  ];
}

/** The quiet days: which, how they were judged, and each setting's false alarms over them. */
function quietDays(t: Tuning): string[] {
  const q = t.quietDays;
  if (q.days.length === 0 || q.current === null)
    return [`**Quiet days:** none replayed (${q.shortfall ?? 'none found'}), so no false alarms were counted.`, ''];
  return [
    `**Quiet days:** ${q.days.map(quietDayText).join(', ')}` +
      ` — whole UTC days before the incident with traffic on which the current settings did not degrade, each ` +
      `replayed at ${formatDuration(q.tickMs)} ticks from the same warm-up under every setting` +
      `${q.shortfall === null ? '' : ` (${q.shortfall})`}. Their false alarms:`,
    '',
    ...table(QUIET_HEADER, quietRows(t, q.current)),
    '',
  ];
}

function tuning(r: Review): string[] {
  const t = r.tuning;
  const out = [
    '## What to tune',
    '',
    `The incident replayed (\`target-health replay --compare\`'s engine) from ${when(t.from)} to ${when(t.to)} ` +
      `at ${formatDuration(t.tickMs)} ticks with the people's decisions above, once with ${t.settingsFrom} and ` +
      `once per candidate, every run over the same ticks from the same warm-up before the ` +
      `${t.incidentFrom === t.onsetAt ? 'onset' : "window's start"} (${when(t.incidentFrom)}), so that its ` +
      `smoothing and streaks have settled by then. First warnings and pauses count from there and are said from ` +
      `the onset; lead is before refusals peaked in the store; throttled ticks are ticks degrading, resisting, ` +
      `paused or below nominal.`,
    '',
    ...table(FIGURES_HEADER, figuresRows(t)),
    '',
  ];
  const live = r.timeline.find((b) => b.to === 'degrading' || b.to === 'resisting');
  // A replayed review's timeline is itself a replay: comparing it with the tuning's says nothing of what ran.
  if (live !== undefined && r.source.kind === 'stored') {
    out.push(
      t.current.firstDegradeAt === live.at
        ? `The replay of the current settings first warned when live did (${when(live.at)}): the replay stands ` +
            `for what ran.`
        : `Live first warned at ${when(live.at)}, the replay of the current settings at ` +
            `${when(t.current.firstDegradeAt)}: the loop ran with other settings than these (give them with ` +
            `--config) or under an older version of its rules.`,
      '',
    );
  }
  out.push(...t.candidates.map(candidateLine), '', ...quietDays(t));
  // When no candidate was a comparison, "none warned earlier" would read as a verdict: only the headline says why.
  if (t.headline.kind !== 'no-comparison')
    out.push(
      t.warnedEarliest === null
        ? '**Warned earlier:** none of the candidates.'
        : `**Warned earliest:** ${t.warnedEarliest}.`,
      t.throttledLeast === null
        ? '**Throttled less:** none of the candidates.'
        : `**Throttled least:** ${t.throttledLeast}.`,
    );
  out.push(
    `**Headline:** ${t.headline.text}`,
    '',
    `To look tick by tick: \`target-health replay ${r.site} --from ${t.from} --to ${t.to} --tick ` +
      `${t.tickMs / 1000}s --compare candidate.json\` with a candidate's JSON above in candidate.json.`,
  );
  return out;
}

export function renderReview(r: Review): string {
  const sections = [
    [
      `# Incident review: ${r.site}, ${when(r.window.from)} → ${when(r.window.to)}`,
      '',
      `Around ${when(r.incidentAt)} (\`target-health review ${r.site} --incident ${r.incidentAt}\`).`,
    ],
    summary(r),
    timeline(r),
    lead(r),
    actions(r),
    decisions(r),
    canaries(r),
    chart(r),
    tuning(r),
  ];
  return `${sections.map((s) => s.join('\n')).join('\n\n')}\n`;
}
