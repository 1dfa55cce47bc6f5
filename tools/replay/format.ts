/**
 * A replay for people: one line per band change, control change or notice (the ticks where something
 * happened), then the summary; and two replays side by side (`--compare`), where they differ.
 */
import { HEALTH_BANDS } from '../../core/common/names';
import type { ReplayResult, ReplaySummary, ReplayTick } from './types';
import { bandCause, bandLabel } from '../../core/control/band-wording';
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';

const dash = (v: number | null): string => (v === null ? '—' : String(v));
const hm = (iso: string): string =>
  iso
    .replace('T', ' ')
    .replace(/:00\.000Z$/, 'Z')
    .replace(/\.000Z$/, 'Z');

/** Why a tick is worth a line: its band changed, its controls changed, it notified, a decision preceded it. */
function eventful(t: ReplayTick, prev: ReplayTick | undefined): boolean {
  return (
    prev === undefined ||
    t.band !== prev.band ||
    t.change !== null ||
    t.notices.length > 0 ||
    t.decisions.length > 0 ||
    (t.state === 'failed') !== (prev.state === 'failed')
  );
}

export function tickLine(t: ReplayTick): string {
  const what = [
    ...t.decisions.map((d) => `decision: ${d}`),
    t.change === null ? null : `controls ${t.change}`,
    ...t.notices.map((n) => `notify ${n.kind}: ${n.title}`),
  ].filter((x) => x !== null);
  return (
    `${hm(t.asOf)}  ${String(t.tick).padStart(5)}  ${dash(t.score).padStart(3)} / ` +
    `${dash(t.smoothedScore).padStart(3)}  ${bandLabel(t.band, bandCause(t.band, t.reasons)).padEnd(9)}  ` +
    `${(t.reasons.join(',') || '—').padEnd(24)}  ` +
    `${what.join('; ')}`
  );
}

export function formatSummary(s: ReplaySummary): string {
  const bands = HEALTH_BANDS.filter((b) => s.timeInBand[b] > 0).map((b) => `${b} ${formatDuration(s.timeInBand[b])}`);
  const notices = Object.entries(s.notices).map(([k, n]) => `${k} ×${n}`);
  return [
    `site          ${s.site}`,
    `period        ${hm(s.from)} → ${hm(s.to)}, ${plural(s.ticks, 'tick')} of ${formatDuration(s.tickMs)}`,
    `time in band  ${bands.join(', ') || '—'}`,
    `first degrade ${s.firstDegradeAt === null ? '—' : hm(s.firstDegradeAt)}`,
    `first pause   ${s.firstPauseAt === null ? '—' : hm(s.firstPauseAt)}`,
    `notices       ${notices.join(', ') || 'none'}`,
    `no score      ${plural(s.unscoredTicks, 'tick')}`,
  ].join('\n');
}

export function formatReplay(r: ReplayResult): string {
  const lines = ['time                  tick  score / smoothed  band       reasons                   what happened'];
  r.ticks.forEach((t, i) => {
    if (eventful(t, r.ticks[i - 1])) lines.push(tickLine(t));
  });
  return `${lines.join('\n')}\n\n${formatSummary(r.summary)}\n`;
}

export interface ReplayDifference {
  asOf: string;
  a: ReplayTick | null;
  b: ReplayTick | null;
  /** The fields that differ: band, score, smoothedScore, reasons, change, notices. */
  fields: string[];
}

export interface ReplayComparison {
  a: ReplaySummary;
  b: ReplaySummary;
  /** Ticks at which the two runs differ in what an operator would see. */
  differences: ReplayDifference[];
}

const same = (x: unknown, y: unknown): boolean => JSON.stringify(x) === JSON.stringify(y);

export function compareReplays(a: ReplayResult, b: ReplayResult): ReplayComparison {
  const byTime = new Map(b.ticks.map((t) => [t.asOf, t]));
  const seen = new Set<string>();
  const differences: ReplayDifference[] = [];
  for (const ta of a.ticks) {
    seen.add(ta.asOf);
    const tb = byTime.get(ta.asOf) ?? null;
    const fields =
      tb === null
        ? ['tick']
        : (['band', 'score', 'smoothedScore', 'reasons', 'change', 'notices'] as const).filter(
            (f) => !same(ta[f], tb[f]),
          );
    if (fields.length > 0) differences.push({ asOf: ta.asOf, a: ta, b: tb, fields: [...fields] });
  }
  for (const tb of b.ticks)
    if (!seen.has(tb.asOf)) differences.push({ asOf: tb.asOf, a: null, b: tb, fields: ['tick'] });
  return { a: a.summary, b: b.summary, differences };
}

export function formatComparison(c: ReplayComparison, nameA: string, nameB: string): string {
  const lines: string[] = [`A = ${nameA}`, `B = ${nameB}`, ''];
  // Band and action differences first: score-only differences are many and mostly small.
  const important = c.differences.filter((d) => d.fields.some((f) => f !== 'score' && f !== 'smoothedScore'));
  lines.push(
    `${plural(c.differences.length, 'tick')} ${c.differences.length === 1 ? 'differs' : 'differ'}, ` +
      `${important.length} in band, reasons, controls or ` +
      `notices${important.length > 0 ? ':' : ''}`,
  );
  for (const d of important.slice(0, 200)) {
    lines.push(`${hm(d.asOf)}  differs in ${d.fields.join(', ')}`);
    lines.push(`  A ${d.a === null ? '(no tick)' : tickLine(d.a)}`);
    lines.push(`  B ${d.b === null ? '(no tick)' : tickLine(d.b)}`);
  }
  if (important.length > 200) lines.push(`… and ${important.length - 200} more (use --json)`);
  lines.push('', 'A:', formatSummary(c.a), '', 'B:', formatSummary(c.b));
  return `${lines.join('\n')}\n`;
}
