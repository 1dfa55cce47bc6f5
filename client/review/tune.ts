/**
 * "What to tune": the incident replayed in-process with the replay engine (tools/replay/engine.ts, what
 * `target-health replay --compare` runs) under the site's current settings and each candidate, over the
 * same ticks and with the people's stored decisions (of the replayed period) applied at their times, so a replay
 * crosses a pause the way the live loop did. Writes nothing. The figures are the replays' own
 * (client/review/tune-figures.ts).
 */
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { parseDecisionsFile } from '../../tools/replay/decisions-file';
import { replaySite, tickTimes } from '../../tools/replay/engine';
import type { ReplayResult } from '../../tools/replay/types';
import { type StoredDecision, readDecisions } from './gather';
import type { Tuning } from './schema';
import { type Candidate, candidateFigures, runFigures, throttledLeast, warnedEarliest } from './tune-figures';

/**
 * Replayed before the incident so the smoothing starts settled: at least an hour, and six half-lives (under 2 % weight
 * left).
 */
export function warmupMs(config: SiteHealthConfig): number {
  return Math.max(3_600_000, 6 * config.scoring.smoothing.halfLifeMs);
}

/** After the incident: restores and a second dip show in the candidates' figures too. */
export const AFTER_MS = 15 * 60_000;

/** Stored decisions as the replay takes them (the loop's own decision schemas validate them again). */
export function replayDecisions(decisions: readonly StoredDecision[]): ReturnType<typeof parseDecisionsFile> {
  return parseDecisionsFile(
    decisions.map((d) => ({ at: d.at.toISOString(), kind: d.kind, who: d.who, why: d.why, ...(d.mode ?? {}) })),
  );
}

export interface TuneInput {
  site: string;
  window: { from: number; to: number };
  now: number;
  current: { config: SiteHealthConfig; settingsFrom: string };
  candidates: readonly Candidate[];
  peakReachedAt: number | null;
}

export async function tune(pool: Pool, input: TuneInput): Promise<Tuning> {
  const tickMs = input.current.config.tickIntervalMs;
  const from = new Date(input.window.from - warmupMs(input.current.config));
  const to = new Date(Math.min(input.window.to + AFTER_MS, input.now));
  const parsed = replayDecisions(await readDecisions(pool, input.site, from, to));
  // The stored decisions passed the same schemas when they were made: a refusal here is a bug, not input.
  if (!parsed.ok) throw new Error(`stored decisions of ${input.site} do not parse: ${parsed.message}`);
  const at = tickTimes(from, to, tickMs);
  const run = (config: SiteHealthConfig): Promise<ReplayResult> =>
    replaySite(pool, {
      site: input.site,
      from,
      to,
      tickMs,
      at,
      config: { ...config, tickIntervalMs: tickMs },
      decisions: parsed.decisions,
    });

  const currentResult = await run(input.current.config);
  const current = {
    result: currentResult,
    figures: runFigures(
      'current',
      `current settings: ${input.current.settingsFrom}`,
      currentResult,
      input.current.config.policy,
      input.peakReachedAt,
    ),
  };
  const candidates = [];
  for (const c of input.candidates) {
    const result = await run(c.config);
    candidates.push(
      candidateFigures(current, {
        result,
        figures: runFigures(c.name, c.description, result, c.config.policy, input.peakReachedAt),
      }),
    );
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    tickMs,
    settingsFrom: input.current.settingsFrom,
    current: current.figures,
    candidates,
    warnedEarliest: warnedEarliest(current.figures, candidates),
    throttledLeast: throttledLeast(candidates),
  };
}
