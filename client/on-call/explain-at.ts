/**
 * `target-health explain <site> [--at T]`, the pure part: the `--json` schema and the text of one past
 * tick explained — its score signal by signal (client/on-call/explain.ts), the band and controls in
 * effect then (control_audit), and which tick was found for the time asked.
 */
import { z } from 'zod';
import { HEALTH_BANDS } from '../../core/common/names';
import { controlsSchema } from '../../core/control/controls';
import { formatSignals, formatTickContext, percent, scoreSentence, tickExplanationSchema } from './explain';
import { controlsText, shortTime } from './status-text';

export const explainSchema = z.object({
  site: z.string(),
  /** The time asked for (`--at`, default now), ISO. */
  at: z.string(),
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
  /** The control change those controls came from. */
  controlsChange: z.object({ at: z.string(), actor: z.string(), reason: z.string() }).nullable(),
  explanation: tickExplanationSchema,
});
export type Explained = z.output<typeof explainSchema>;

export function formatExplained(x: Explained): string {
  const e = x.explanation;
  const w = e.window;
  const lines = [
    `${x.site} at tick ${x.tick.tick} (${shortTime(x.tick.assessedAt)}), the latest tick at or before ` +
      `${shortTime(x.at)}`,
    '',
    `score      ${scoreSentence(e)}  (raw; the smoothed score is not stored per tick)`,
    `state      ${e.state}; current window ${shortTime(w.currentFrom)} to ${shortTime(w.currentTo)}: ` +
      `${w.requests.current} requests${w.minRequests === null ? '' : ` (needs ${w.minRequests})`}` +
      `${w.scope === 'healthy-routes' ? ', failing routes set aside' : ''}; normal from ` +
      `${shortTime(w.baselineFrom)} to ${shortTime(w.baselineTo)}: ${w.requests.baseline} requests`,
    `band       ${x.band ?? '— (no control change recorded yet)'}`,
    `controls   ${controlsText(x.controls)}`,
    ...(x.controlsChange === null
      ? []
      : [`           set ${shortTime(x.controlsChange.at)} by ${x.controlsChange.actor}: ${x.controlsChange.reason}`]),
    `reasons    ${e.reasons.length > 0 ? e.reasons.join(', ') : '—'}`,
    '',
    "signals, now vs the site's normal (95% intervals):",
    ...formatSignals(e.signals),
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
