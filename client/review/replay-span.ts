/**
 * One span replayed under several settings, like with like: the same tick times, the same stored decisions (of
 * the span, applied at their times), the same start, one run per configuration, in order. Writes nothing.
 */
import type { SiteHealthConfig } from '../../core/control/config';
import type { Pool } from '../../server/db/pool';
import { parseDecisionsFile } from '../../tools/replay/decisions-file';
import { memoisedReads, replaySite, type ReplayOptions, tickTimes } from '../../tools/replay/engine';
import type { ReplayResult } from '../../tools/replay/types';
import { ownCanaryFetches } from '../../server/db/canaries';
import { type StoredDecision, readDecisions } from './gather';

/** Stored decisions as the replay takes them (the loop's own decision schemas validate them again). */
export function replayDecisions(decisions: readonly StoredDecision[]): ReturnType<typeof parseDecisionsFile> {
  return parseDecisionsFile(
    decisions.map((d) => ({ at: d.at.toISOString(), kind: d.kind, who: d.who, why: d.why, ...(d.mode ?? {}) })),
  );
}

type Deps = NonNullable<ReplayOptions['deps']>;

/** A week of 1-minute ticks: the longest incident window (3 days either side of T) and its warm-up. */
export const MAX_SHARED_WINDOWS = 10_080;

/**
 * The assessment's reads, shared by the runs of one span: over the same ticks every setting asks the same windows
 * (the settings tried differ in smoothing and bands, not in what is read), so each is read once — the same rows,
 * the same answer (the replays write nothing), and the runs after the first cost little more than their scoring.
 * A run whose state asks another window (a resume's gate at another time) reads it. Lives as long as the span,
 * and holds at most MAX_SHARED_WINDOWS (about 11 kB each, measured: a day at 1-minute ticks keeps 17 MB); past that,
 * windows are read per run again, so a long span costs time, not memory.
 */
export function sharedReads(): Deps {
  const reads = memoisedReads();
  const windows = new Map<string, ReturnType<NonNullable<Deps['readWindows']>>>();
  const fetches = new Map<string, ReturnType<typeof ownCanaryFetches>>();
  return {
    ...reads,
    readWindows: (pool, name, spec) => {
      const key = JSON.stringify([name, spec]);
      let hit = windows.get(key);
      if (hit === undefined) {
        hit = reads.readWindows!(pool, name, spec);
        if (windows.size < MAX_SHARED_WINDOWS) windows.set(key, hit);
      }
      return hit;
    },
    ownCanaryFetches: (pool, name, from, to) => {
      const key = `${name}/${from.toISOString()}/${to.toISOString()}`;
      let hit = fetches.get(key);
      if (hit === undefined) {
        hit = ownCanaryFetches(pool, name, from, to);
        fetches.set(key, hit);
      }
      return hit;
    },
  };
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
  /** Replays the span under `config` (the span's tick replaces the config's). */
  run(config: SiteHealthConfig): Promise<ReplayResult>;
}

/**
 * Opens `span` for replays: the stored decisions of the span are read and parsed once, the tick times computed once,
 * and every run shares the assessment's reads (sharedReads): `tune`'s search replays one span under dozens of
 * candidate settings, and only the first run pays for the store's reads.
 */
export async function openSpan(pool: Pool, span: Span): Promise<OpenSpan> {
  const from = new Date(span.from);
  const to = new Date(span.to);
  const parsed = replayDecisions(await readDecisions(pool, span.site, from, to));
  // The stored decisions passed the same schemas when they were made: a refusal here is a bug, not input.
  if (!parsed.ok) throw new Error(`stored decisions of ${span.site} do not parse: ${parsed.message}`);
  const at = tickTimes(from, to, span.tickMs);
  const deps = sharedReads();
  return {
    span,
    run: (config) =>
      replaySite(pool, {
        site: span.site,
        from,
        to,
        tickMs: span.tickMs,
        at,
        config: { ...config, tickIntervalMs: span.tickMs },
        decisions: parsed.decisions,
        deps,
      }),
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
