/**
 * `tune` in words (pure): why each setting moved, the proposal's one-line summary (the `why` `--apply` sends to
 * `configure`), and the whole report as text.
 */
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import type { Incident } from './labels';
import type { IncidentOutcome, Scorecard } from './objective';
import type { TuneReport } from './schema';
import { type Move, showValue } from './space';

const hhmm = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;

const COMPONENTS: { key: keyof Scorecard; name: string; show: (v: number) => string }[] = [
  { key: 'missed', name: 'missed pauses', show: String },
  { key: 'falsePauses', name: 'false pauses', show: String },
  { key: 'leadMs', name: 'lead', show: (v) => formatDuration(v) },
  { key: 'flaps', name: 'flaps', show: String },
  { key: 'throttledHealthyMs', name: 'throttled while healthy', show: (v) => formatDuration(v) },
];

/** `false pauses 1 → 0, lead 0 s → 12 min`: the components that differ. */
export function cardDelta(a: Scorecard, b: Scorecard): string {
  const parts = COMPONENTS.filter((c) => a[c.key] !== b[c.key]).map(
    (c) => `${c.name} ${c.show(a[c.key])} → ${c.show(b[c.key])}`,
  );
  return parts.length === 0 ? 'no change on its own' : parts.join(', ');
}

const move = (m: Move): string => `${m.field} ${showValue(m.field, m.from)} → ${showValue(m.field, m.to)}`;

/**
 * Why one setting moved: what the replays give with this setting alone moved from the current ones — the
 * scorecard's components that change, and the labelled incidents whose outcome it turns.
 */
export function explainMove(
  m: Move,
  current: { card: Scorecard; outcomes: readonly IncidentOutcome[] },
  alone: { card: Scorecard; outcomes: readonly IncidentOutcome[] },
  incidents: readonly Incident[],
): string {
  const turned = incidents.flatMap((i, k) => {
    const a = current.outcomes[k]!;
    const b = alone.outcomes[k]!;
    return a.right !== b.right ? [`the ${i.label} of ${hhmm(i.from)}: ${a.outcome} → ${b.outcome}`] : [];
  });
  return `alone: ${cardDelta(current.card, alone.card)}${turned.length === 0 ? '' : `; ${turned.join('; ')}`}`;
}

/** The proposal in one line: what moves, and the scorecard it buys. */
export function summaryOf(site: string, moves: readonly Move[], a: Scorecard, b: Scorecard, changed: number): string {
  return (
    `tune ${site}: ${moves.map(move).join(', ')} — ${cardDelta(a, b)} over the labelled incidents and quiet ` +
    `days; ${plural(changed, 'incident')} change outcome`
  );
}

function card(c: Scorecard): string {
  return COMPONENTS.map((x) => `${x.name} ${x.show(c[x.key])}`).join(', ');
}

/** The report as text: the labels, the verdict, the proposal and what backs it. */
export function renderTune(r: TuneReport): string {
  const lines: string[] = [
    `${r.site}: ${r.from} → ${r.to}, a tick every ${formatDuration(r.tickMs)}`,
    `settings: ${r.settingsFrom}`,
    `record: ${r.recordFrom}`,
    '',
    `Incidents (${r.incidents.length}):`,
    ...(r.incidents.length === 0
      ? ['  none']
      : r.incidents.map(
          (i) =>
            `  ${i.from} → ${i.to}  ${i.label ?? 'unlabelled'}${i.because === '' ? '' : `: ${i.because}`}` +
            (i.settingsChangedAfter === null ? '' : `; then ${i.settingsChangedAfter}`),
        )),
    `Quiet days: ${r.quietDays.length === 0 ? 'none' : r.quietDays.join(', ')}`,
    '',
  ];
  if (r.search !== null)
    lines.push(
      `Search: ${plural(r.search.evaluations, 'candidate')} scored over ${plural(r.search.rounds, 'round')}, ` +
        `${r.search.better} better than the current settings`,
    );
  if (r.current !== null) lines.push(`Current: ${card(r.current)}`);
  if (r.proposal !== null) {
    lines.push(`Proposed: ${card(r.proposal.scorecard)}`, '', 'Changes:');
    for (const c of r.proposal.changes) lines.push(`  ${move(c)}`, `    why: ${c.why}`);
    lines.push('', `Incidents whose outcome changes (${r.proposal.outcomes.length}):`);
    for (const o of r.proposal.outcomes)
      lines.push(
        `  ${o.incidentFrom} ${o.label}: ${o.before} → ${o.after}${o.rightAfter ? ' (right)' : ' (still wrong)'}`,
      );
    lines.push('', `configure --config with: ${JSON.stringify(r.proposal.patch)}`);
  }
  if (r.guard !== null) {
    lines.push(
      '',
      `Guard rail: ${r.guard.source}, ${(r.guard.totalMs / 1000).toFixed(1)} s; ` +
        (r.guard.rejected.length === 0
          ? 'no candidate rejected'
          : `${plural(r.guard.rejected.length, 'candidate')} rejected:`),
    );
    for (const x of r.guard.rejected) lines.push(`  ${x.changes.map(move).join(', ')}: ${x.regressions.join('; ')}`);
  }
  lines.push('', `Verdict: ${r.verdict.text}`);
  if (r.applied !== null)
    lines.push(
      `Applied: change ${r.applied.changeKey} at ${r.applied.changedAt ?? '—'} (${r.applied.fields.join(', ')})`,
    );
  return `${lines.join('\n')}\n`;
}
