/**
 * Where a review, an explanation, a history or a chart took the loop's ticks from (pure): the store (the live
 * loop's own), or a replay made for the occasion — with which settings, from when (a warm-up before the period,
 * so smoothing and streaks have settled), at which tick — and the `replay` command that gives the same ticks.
 */
import { z } from 'zod';
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';

export const recordSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('stored') }),
  z.object({
    kind: z.literal('replayed'),
    /** Why a replay: `no live ticks in the period`, `--config candidate.json`. */
    why: z.string(),
    /** Words after "with": `the product defaults (…)`, `the settings of candidate.json`. */
    settingsFrom: z.string(),
    tickMs: z.number().int().positive(),
    /** The replay's start (the warm-up begins here) and end, ISO. */
    from: z.string(),
    to: z.string(),
    /** The people's stored decisions it applied at their times. */
    decisions: z.number().int().nonnegative(),
    /** Settings changes inside the period (the replay used one set of settings). */
    settingsChangedDuring: z.array(z.string()),
    /** The `target-health replay …` command whose ticks these are. */
    command: z.string(),
  }),
]);
export type RecordSource = z.output<typeof recordSourceSchema>;
export type ReplayedSource = Extract<RecordSource, { kind: 'replayed' }>;

/** One line saying where the ticks come from; null for stored ticks (the usual case says nothing). */
export function sourceLine(s: RecordSource): string | null {
  if (s.kind === 'stored') return null;
  const changed =
    s.settingsChangedDuring.length === 0
      ? ''
      : `; settings changed during it (${s.settingsChangedDuring.join('; ')}), the replay keeps these`;
  const decisions =
    s.decisions === 0
      ? ''
      : `, ${plural(s.decisions, 'stored decision')} applied at ${s.decisions === 1 ? 'its time' : 'their times'}`;
  return (
    `replayed (${s.why}): the loop as it would have run with ${s.settingsFrom}, a tick every ` +
    `${formatDuration(s.tickMs)} from ${s.from} (warm-up included) to ${s.to}${decisions}${changed}; ` +
    `\`${s.command}\` gives the same ticks`
  );
}
