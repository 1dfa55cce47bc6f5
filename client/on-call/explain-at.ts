/**
 * `target-health explain <site> [--at T]`, the pure part: the `--json` schema and the text of one past
 * tick explained — its score signal by signal (client/on-call/explain.ts), the band and controls in
 * effect then (control_audit), and which tick was found for the time asked.
 */
import { z } from 'zod';
import { recordSourceSchema, sourceLine } from '../loop-record/source';
import { HEALTH_BANDS } from '../../core/common/names';
import { controlsSchema } from '../../core/control/controls';
import { bandLabel } from '../../core/control/band-wording';
import { plural } from '../../core/common/plural';
import { bandCauseSchema } from './band-cause-schema';
import { formatTickContext, percent, scoreSentence, signalLines, tickExplanationSchema } from './explain';
import { controlsText, shortTime } from './status-text';

export const explainSchema = z.object({
  site: z.string(),
  /** The time asked for (`--at`, default now), ISO. */
  at: z.string(),
  /** The live loop's stored tick, or one a replay made for the question (client/loop-record/source.ts). */
  source: recordSourceSchema,
  /** The latest tick stored at or before it. */
  tick: z.object({
    tick: z.number().int(),
    assessedAt: z.string(),
    assessmentKey: z.string(),
    chainId: z.string().nullable(),
  }),
  /** The loop's band and controls in effect then (after that tick acted); null when none were recorded yet. */
  band: z.enum(HEALTH_BANDS).nullable(),
  controls: controlsSchema().extend({ version: z.number().int().optional() }).nullable(),
  /**
   * The control change those controls came from: when, who, its own reason (the words of the tick or the decision
   * that made it — an earlier tick's, unless `tick` is this one) and the tick that made it (null: a decision).
   */
  controlsChange: z
    .object({
      at: z.string(),
      actor: z.string(),
      reason: z.string(),
      tick: z.object({ tick: z.number().int(), assessmentKey: z.string() }).nullable(),
    })
    .nullable(),
  /** What put the site in that band: the reasons of the tick that made the change (core/control/band-wording.ts). */
  bandCause: bandCauseSchema,
  /**
   * The tick's own scoring step as stored with it: the rounded smoothed score its band was judged on (null while
   * the site had none) and the band the score put it in, before the loop's gate. Null for a tick stored before
   * the release that stores it.
   */
  scoring: z.object({ smoothedScore: z.number().nullable(), scoredBand: z.enum(HEALTH_BANDS) }).nullable(),
  explanation: tickExplanationSchema,
});
export type Explained = z.output<typeof explainSchema>;

/**
 * Where the controls in effect came from. Their reason is worded by the tick (or the person) that set them,
 * so it is this tick's own only when this tick made the change: an earlier tick's words (`too little current
 * traffic (42 requests)`) would read as this tick's. A person's reason is theirs whatever the tick.
 */
function controlsChangeLine(x: Explained): string | null {
  const c = x.controlsChange;
  if (c === null) return null;
  if (c.tick === null) return `set ${shortTime(c.at)} by ${c.actor}: ${c.reason}`;
  if (c.tick.assessmentKey === x.tick.assessmentKey) return `set by this tick: ${c.reason}`;
  return `set at tick ${c.tick.tick} (${shortTime(c.at)}) by ${c.actor}, unchanged since`;
}

/** The tick's smoothed score and scored band, or that the tick was stored without them. */
function smoothedLine(scoring: Explained['scoring']): string {
  if (scoring === null) return '— (not stored with this tick: it was stored before the release that stores it)';
  const score = scoring.smoothedScore === null ? '— (no score yet)' : String(scoring.smoothedScore);
  return `${score}, scored band ${scoring.scoredBand} (what the smoothed score and the refusal rules say alone)`;
}

export function formatExplained(x: Explained): string {
  const e = x.explanation;
  const w = e.window;
  const change = controlsChangeLine(x);
  const source = sourceLine(x.source);
  const lines = [
    `${x.site} at tick ${x.tick.tick} (${shortTime(x.tick.assessedAt)}), the latest ` +
      `${source === null ? '' : 'replayed '}tick at or before ${shortTime(x.at)}`,
    ...(source === null ? [] : [source]),
    '',
    `score      ${scoreSentence(e)}`,
    `smoothed   ${smoothedLine(x.scoring)}`,
    `state      ${e.state}; current window ${shortTime(w.currentFrom)} to ${shortTime(w.currentTo)}: ` +
      `${plural(w.requests.current, 'request')}${w.minRequests === null ? '' : ` (needs ${w.minRequests})`}` +
      `${w.scope === 'healthy-routes' ? ', failing routes set aside' : ''}; normal from ` +
      `${shortTime(w.baselineFrom)} to ${shortTime(w.baselineTo)}: ${plural(w.requests.baseline, 'request')}`,
    `band       ${x.band === null ? '— (no control change recorded yet)' : bandLabel(x.band, x.bandCause)}`,
    `controls   ${controlsText(x.controls)}`,
    ...(change === null ? [] : [`           ${change}`]),
    `reasons    ${e.reasons.length > 0 ? e.reasons.join(', ') : '—'}`,
    '',
    "signals, now vs the site's normal (95% intervals):",
    ...signalLines(e),
    '',
    ...formatTickContext(e).map(([label, text]) => `${label.padEnd(10)} ${text}`),
  ];
  const rate = e.signals.find((s) => s.unit === 'rate' && s.score === 'health');
  const latency = e.signals.find((s) => s.unit === 'p95-ms');
  if (rate !== undefined && latency !== undefined) {
    // The scoring's own rule (core/scoring/signal-math.ts), with this site's caps.
    lines.push(
      '',
      `A rate costs weight × (now − normal) / ${percent(rate.cap)}, latency weight × (p95 / normal − 1) / ` +
        `${latency.cap - 1}, each between 0 and its weight; the score is 100 minus their sum, rounded.`,
    );
  }
  return `${lines.join('\n')}\n`;
}
