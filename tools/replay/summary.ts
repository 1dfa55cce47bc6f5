/** A replay's summary: time in each band, the first degrade and pause, notices by kind. */
import { HEALTH_BANDS, type HealthBand } from '../../core/common/names';
import type { ReplaySummary, ReplayTick } from './types';

export function summarise(
  site: string,
  opts: { from: Date; to: Date; tickMs: number },
  times: readonly Date[],
  ticks: readonly ReplayTick[],
): ReplaySummary {
  const timeInBand = Object.fromEntries(HEALTH_BANDS.map((b) => [b, 0])) as Record<HealthBand, number>;
  const notices: ReplaySummary['notices'] = {};
  let firstDegradeAt: string | null = null;
  let firstPauseAt: string | null = null;
  let unscoredTicks = 0;
  for (const [i, t] of ticks.entries()) {
    // A tick's band holds until the next tick (the last one: one interval).
    const until = i + 1 < ticks.length ? Date.parse(ticks[i + 1]!.asOf) : Date.parse(t.asOf) + opts.tickMs;
    timeInBand[t.band] += until - Date.parse(t.asOf);
    if (firstDegradeAt === null && (t.band === 'degrading' || t.band === 'resisting')) firstDegradeAt = t.asOf;
    if (firstPauseAt === null && t.awaitingSince !== null && t.band === 'resisting') firstPauseAt = t.asOf;
    if (t.score === null) unscoredTicks += 1;
    for (const n of t.notices) notices[n.kind] = (notices[n.kind] ?? 0) + 1;
  }
  return {
    site,
    from: (times[0] ?? opts.from).toISOString(),
    to: opts.to.toISOString(),
    tickMs: opts.tickMs,
    ticks: ticks.length,
    timeInBand,
    firstDegradeAt,
    firstPauseAt,
    notices,
    unscoredTicks,
  };
}
