/**
 * The run's "current details" in the Temporal UI (markdown). A person opens the run because something
 * is wrong, so it leads with what they came for: the band, why the site is there (reasons, why the band
 * is held, a loop problem) and — when the site waits for a person — the exact commands that decide, with
 * the site's own name in them. The table of scores, controls and ticks follows.
 *
 * Pure and free of Node builtins: the workflow calls it on every publish (setCurrentDetails records no
 * command in the history, so what it says can change without breaking replay).
 */
import { formatCrawlerCanaries } from '../canaries/latest';
import { formatDuration } from '../common/durations';
import { plural } from '../common/plural';
import { type BandCause, bandAction, bandCause, bandPhrase } from './band-wording';
import type { LoopState } from './loop-state';
import type { TickAssessment } from './tick-assessment';

const dash = (v: number | null): string => (v === null ? '—' : String(v));

/** A word for sh: as is when it is plainly safe (host names are), else single-quoted. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The command that takes decision `kind` for `site`; who and why are the person's to fill in. */
export function decideCommand(site: string, kind: 'resume' | 'stop'): string {
  return `target-health decide ${kind} ${shellWord(site)} --who <you> --why "<why>"`;
}

/** Markdown text on one line: a stray newline or pipe would break the layout or the table. */
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ');
const cell = (s: string): string => oneLine(s).replace(/\|/g, '\\|');

/**
 * What put the loop in its band. While it waits after its own pause the band is frozen, so that is the
 * pausing tick's doing, not the latest tick's: canary traffic alone rarely fires a refusal rule again, and
 * `resisting: score 98` would read as the contradiction the shared wording exists to avoid. The state keeps
 * that tick's reasons only while it is among the last HISTORY_LIMIT ticks, and a wait lasts days; the
 * pause's reason quotes them in full (`…; reasons majority_refusal, hard_block`, and `…: majority_refusal,
 * hard_block` in states carried from before the shared wording), so a rule's key is in it exactly when the
 * rule fired. A pause by hand is the person's; otherwise the latest tick set the band.
 */
export function detailsBandCause(state: Pick<LoopState, 'band' | 'reasons' | 'awaiting'>): BandCause {
  const waiting = state.awaiting;
  if (waiting === null) return bandCause(state.band, state.reasons);
  if (waiting.kind === 'manual') return { kind: 'person' };
  return bandCause(state.band, waiting.reason.split(/[^a-z_]+/));
}

/** The first lines: band, why, and what a person can do about it. */
function lead(site: string, state: LoopState): string[] {
  const scoreSays = state.scoredBand !== state.band ? ` (the score alone says ${state.scoredBand})` : '';
  const waiting = state.awaiting;
  const cause = detailsBandCause(state);
  // The band as every surface words it (core/control/band-wording.ts), with the scores of the latest tick.
  const { band, reasons, score, smoothedScore } = state;
  const phrase = bandPhrase({ band, reasons, score, smoothedScore, cause });
  let bandLine = `**${phrase}**${scoreSays}`;
  if (waiting !== null) {
    // Who paused it, unless the phrase already says (a refusal rule).
    const by =
      waiting.kind === 'manual'
        ? [`paused by ${waiting.pausedBy ?? 'a person'}`]
        : bandAction(state.band, cause) === null
          ? ['paused by the loop']
          : [];
    const reminders = waiting.remindersSent > 0 ? [`${plural(waiting.remindersSent, 'reminder')} sent`] : [];
    const notes = [...by, ...reminders];
    bandLine +=
      ` — **waiting for a person** since ${waiting.since}` + (notes.length > 0 ? ` (${notes.join(', ')})` : '');
  }
  const why: string[] = [];
  if (waiting !== null) why.push(`Paused: ${oneLine(waiting.reason)}`);
  why.push(`Reasons: ${state.reasons.length > 0 ? state.reasons.join(', ') : 'none'}`);
  if (state.noScore !== null) why.push(`No score: ${oneLine(state.noScore.detail)}`);
  if (state.heldFor !== null) why.push(`Band held: ${oneLine(state.heldFor)}`);
  if (state.problem !== null)
    why.push(
      `**Problem: ${state.problem.kind}** since ${state.problem.since} (${plural(state.problem.ticks, 'tick')}): ` +
        `${oneLine(state.problem.message)}`,
    );
  const lines = [`${bandLine} · ${site}`, '', ...why.map((w) => `- ${w}`)];
  if (waiting !== null) {
    lines.push(
      '',
      '**Decide** (nothing more happens until someone does):',
      '',
      `- resume: \`${decideCommand(site, 'resume')}\``,
      `- stop: \`${decideCommand(site, 'stop')}\``,
    );
  }
  return lines;
}

/**
 * The canary evidence of the latest tick: the product's canaries (counted, failed, mismatched) and the
 * crawlers' own canary requests of the current window — while paused, the only traffic there is.
 */
function canaryCell(t: TickAssessment): string {
  const parts: string[] = [];
  const w = t.canaries?.window;
  if (w !== undefined)
    parts.push(`${w.runs} of the product's counted, ${w.failures} failed, ${w.mismatches} mismatched`);
  const crawler = t.crawlerCanaries;
  if (crawler !== undefined && crawler.requests > 0)
    parts.push(formatCrawlerCanaries(crawler, { from: t.window.currentFrom, to: t.window.currentTo }));
  return parts.length > 0 ? parts.join('; ') : 'none defined, none from the crawler';
}

export function detailsMarkdown(
  site: string,
  state: LoopState,
  tickIntervalMs: number,
  latest: TickAssessment | null = null,
): string {
  const c = state.controls;
  const controls =
    c === null
      ? '—'
      : c.paused
        ? c.canaryOnly
          ? 'paused, canaries only'
          : 'paused'
        : `concurrency ${c.concurrencyLimit}, revisit ×${c.revisitMultiplier}, cost ×${c.effectiveCostMultiplier}`;
  const decision =
    state.lastDecision === null
      ? '—'
      : `${state.lastDecision.kind} by ${state.lastDecision.who} at ${state.lastDecision.decidedAt}`;
  const rows: Array<[string, string]> = [
    ['score / smoothed', `${dash(state.score)} / ${dash(state.smoothedScore)}`],
    ['parser health', dash(state.parserHealth)],
    ['controls', controls],
    // The latest tick's canary evidence (absent before the first tick).
    ...(latest === null ? [] : [['canaries', canaryCell(latest)] as [string, string]]),
    ['last decision', decision],
    ['tick', `${state.tick} (every ${formatDuration(tickIntervalMs)}), last at ${state.lastAssessedAt ?? '—'}`],
  ];
  return [...lead(site, state), '', '| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${cell(v)} |`)].join('\n');
}
