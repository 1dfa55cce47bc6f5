/**
 * One span replayed under several settings, like with like: the same tick times, the same stored decisions (of
 * the span, applied at their times), the same start, one run per configuration, in order. Writes nothing.
 */
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { parseDecisionsFile } from '../../tools/replay/decisions-file';
import { type ReplayReads, replayReads, replaySite, tickTimes } from '../../tools/replay/engine';
import type { ReplayResult } from '../../tools/replay/types';
import { type StoredDecision, readDecisions } from './gather';

/** Stored decisions as the replay takes them (the loop's own decision schemas validate them again). */
export function replayDecisions(decisions: readonly StoredDecision[]): ReturnType<typeof parseDecisionsFile> {
  return parseDecisionsFile(
    decisions.map((d) => ({ at: d.at.toISOString(), kind: d.kind, who: d.who, why: d.why, ...(d.mode ?? {}) })),
  );
}

export interface Span {
  site: string;
  from: number;
  to: number;
  tickMs: number;
}

/** A span opened once, replayed under as many settings as asked: its decisions read once, its windows shared. */
export interface OpenSpan {
  span: Span;
  /** Replays the span under `config` (the span's tick replaces the config's); one run at a time. */
  run(config: SiteHealthConfig): Promise<ReplayResult>;
}

/**
 * Opens `span` for replays: the stored decisions of the span are read and parsed once, the tick times computed once,
 * and every run shares the assessment's reads (tools/replay/engine.ts `replayReads`: the period's rollups read once,
 * each window summed in memory), made at the first run: `tune`'s search replays one span under dozens of candidate
 * settings, and only the first run pays for the store's reads.
 */
export async function openSpan(pool: Pool, span: Span): Promise<OpenSpan> {
  const from = new Date(span.from);
  const to = new Date(span.to);
  const parsed = replayDecisions(await readDecisions(pool, span.site, from, to));
  // The stored decisions passed the same schemas when they were made: a refusal here is a bug, not input.
  if (!parsed.ok) throw new Error(`stored decisions of ${span.site} do not parse: ${parsed.message}`);
  const at = tickTimes(from, to, span.tickMs);
  let reads: Promise<ReplayReads> | undefined;
  return {
    span,
    run: async (config) => {
      reads ??= replayReads(pool, span.site, at, config);
      return replaySite(pool, {
        site: span.site,
        from,
        to,
        tickMs: span.tickMs,
        at,
        config: { ...config, tickIntervalMs: span.tickMs },
        decisions: parsed.decisions,
        deps: await reads,
      });
    },
  };
}

/** Replays `span` under each configuration (the tick of the span replaces theirs), in the order given. */
export async function replaySpan(
  pool: Pool,
  span: Span,
  configs: readonly SiteHealthConfig[],
): Promise<ReplayResult[]> {
  const opened = await openSpan(pool, span);
  const out: ReplayResult[] = [];
  for (const config of configs) out.push(await opened.run(config));
  return out;
}
