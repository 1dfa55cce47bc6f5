/**
 * Replay records for the pure tests of what reads them (the backtest's scorecard, the review's tuning): one tick
 * with only what the test sets, and a result around ticks with the engine's own summary (tools/replay/summary.ts).
 */
import type { HealthBand } from '../../core/common/names';
import type { Controls } from '../../core/control/controls';
import { summarise } from '../../tools/replay/summary';
import type { ReplayNotice, ReplayResult, ReplayTick } from '../../tools/replay/types';

export interface TickOver {
  band?: HealthBand;
  reasons?: string[];
  /** Default 90; null: the tick had too little traffic to score. */
  score?: number | null;
  notices?: ReplayNotice['kind'][];
  failingRoutes?: string[];
  /** Default null (no control change yet). */
  controls?: Controls | null;
  awaitingSince?: string | null;
}

export function replayTick(i: number, asOf: string, o: TickOver = {}): ReplayTick {
  const band = o.band ?? 'healthy';
  const score = o.score === undefined ? 90 : o.score;
  return {
    tick: i,
    asOf,
    state: score === null ? 'insufficient-data' : 'scored',
    score,
    smoothedScore: score,
    band,
    scoredBand: band,
    parserHealth: null,
    reasons: o.reasons ?? [],
    routeVerdict: (o.failingRoutes ?? []).length > 0 ? 'route-specific' : 'none',
    failingRoutes: o.failingRoutes ?? [],
    requests: score === null ? 0 : 600,
    controls: o.controls ?? null,
    change: null,
    notices: (o.notices ?? []).map((kind) => ({
      kind,
      audience: kind === 'parser_health' ? 'parser_owner' : 'owner',
      title: kind,
    })),
    awaitingSince: o.awaitingSince ?? null,
    decisions: [],
  };
}

/** A replay of these ticks (ascending, `tickMs` apart), summarised as the engine summarises one. */
export function replayResult(site: string, ticks: ReplayTick[], tickMs: number): ReplayResult {
  const times = ticks.map((t) => new Date(t.asOf));
  const from = times[0] ?? new Date(0);
  const to = new Date((times[times.length - 1] ?? from).getTime() + tickMs);
  return { ticks, summary: summarise(site, { from, to, tickMs }, times, ticks) };
}
