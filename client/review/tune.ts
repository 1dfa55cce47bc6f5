/**
 * "What to tune": the incident replayed in-process with the replay engine (tools/replay/engine.ts, what
 * `target-health replay --compare` runs) under the site's current settings and each candidate, over the
 * same ticks, from the same warm-up and with the people's stored decisions (of the replayed period) applied at
 * their times, so a replay crosses a pause the way the live loop did; then the same over the site's quiet days
 * (client/review/quiet-days.ts), where a candidate's false alarms show. Writes nothing. The figures are the
 * replays' own (client/review/tune-figures.ts), the sentence that sums them up client/review/tune-headline.ts.
 */
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { quietDays } from './quiet-days';
import { replaySpan } from './replay-span';
import type { Tuning } from './schema';
import { settleMs } from './settle';
import { type Candidate, type Run, candidateFigures, runFigures, throttledLeast, warnedEarliest } from './tune-figures';
import { headline } from './tune-headline';

export { replayDecisions } from './replay-span';

/**
 * Replayed before the incident's onset (and before each quiet day) so every run has settled there: twice the
 * slowest smoothing's settling (client/review/settle.ts: six half-lives), and at least two hours. Twice, so a
 * run whose first scores came a little after the warm-up began is still settled when the incident starts; the
 * same warm-up for every run, so their ticks are the same.
 */
export function warmupMs(configs: readonly SiteHealthConfig[]): number {
  const slowest = Math.max(...configs.map((c) => c.scoring.smoothing.halfLifeMs));
  return Math.max(2 * 3_600_000, 2 * settleMs(slowest));
}

/** After the incident: restores and a second dip show in the candidates' figures too. */
export const AFTER_MS = 15 * 60_000;

export interface TuneInput {
  site: string;
  window: { from: number; to: number };
  now: number;
  current: { config: SiteHealthConfig; settingsFrom: string };
  candidates: readonly Candidate[];
  peakReachedAt: number | null;
  /** The incident's onset (the review's early.onset), epoch ms, or null when it has none. */
  onsetAt: number | null;
  /** How many quiet days to replay the settings over (`--quiet-days`; 0: none). */
  quietDays: number;
}

export async function tune(pool: Pool, input: TuneInput): Promise<Tuning> {
  const tickMs = input.current.config.tickIntervalMs;
  const configs = [input.current.config, ...input.candidates.map((c) => c.config)];
  const warmup = warmupMs(configs);
  // The incident starts at its onset (a tarpit's slowness may come hours before the window), or at the window's
  // start when that is earlier (an onset found after the first warning): the live milestones all count from there.
  const start =
    input.onsetAt !== null && input.onsetAt <= input.window.from
      ? { at: input.onsetAt, what: 'the onset' }
      : { at: input.window.from, what: "the window's start" };
  const from = start.at - warmup;
  const to = Math.min(input.window.to + AFTER_MS, input.now);
  const results = await replaySpan(pool, { site: input.site, from, to, tickMs }, configs);
  const marks = { incidentFrom: start.at, peakReachedAt: input.peakReachedAt, onsetAt: input.onsetAt };
  const runs: Run[] = results.map((result, i) => {
    const c = i === 0 ? null : input.candidates[i - 1]!;
    return {
      result,
      halfLifeMs: configs[i]!.scoring.smoothing.halfLifeMs,
      figures: runFigures(
        c?.name ?? 'current',
        c?.description ?? `current settings: ${input.current.settingsFrom}`,
        result,
        configs[i]!.policy,
        marks,
      ),
    };
  });
  const quiet = await quietDays(pool, {
    site: input.site,
    before: start.at,
    wanted: input.quietDays,
    tickMs,
    warmupMs: warmup,
    current: input.current.config,
    candidates: input.candidates.map((c) => c.config),
  });
  const current = runs[0]!;
  const candidates = runs.slice(1).map((run, i) => {
    const q = quiet.candidates[i] ?? null;
    const pair =
      q === null || quiet.quietDays.current === null ? null : { current: quiet.quietDays.current, candidate: q };
    return candidateFigures(current, run, start, pair);
  });
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    tickMs,
    settingsFrom: input.current.settingsFrom,
    current: current.figures,
    candidates,
    warnedEarliest: warnedEarliest(current.figures, candidates),
    throttledLeast: throttledLeast(candidates),
    onsetAt: input.onsetAt === null ? null : new Date(input.onsetAt).toISOString(),
    incidentFrom: new Date(start.at).toISOString(),
    quietDays: quiet.quietDays,
    headline: headline(current.figures, candidates, quiet.quietDays),
  };
}
