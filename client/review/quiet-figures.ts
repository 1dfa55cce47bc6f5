/**
 * A run over a quiet day (pure): the false alarms a setting raises where nothing happened — each move into
 * degrading or resisting, each pause, and the ticks it throttled (the backtest's measure). Only ticks inside the
 * day count; the warm-up before it only carries the band and the controls into it.
 */
import type { ActionPolicy } from '../../core/control/controls';
import type { ReplayTick } from '../../tools/replay/types';
import type { QuietFigures } from './schema';
import { throttledTick } from './tune-figures';

const warning = (t: ReplayTick | undefined): boolean => t?.band === 'degrading' || t?.band === 'resisting';
const paused = (t: ReplayTick | undefined): boolean => t?.controls?.paused === true;

export function quietFigures(
  ticks: readonly ReplayTick[],
  day: { from: number; to: number },
  policy: ActionPolicy,
): QuietFigures {
  const out: QuietFigures = { degrades: 0, pauses: 0, throttledTicks: 0 };
  let prev: ReplayTick | undefined;
  for (const t of ticks) {
    const at = Date.parse(t.asOf);
    if (at >= day.from && at < day.to) {
      if (warning(t) && !warning(prev)) out.degrades += 1;
      if (paused(t) && !paused(prev)) out.pauses += 1;
      if (throttledTick(t, policy)) out.throttledTicks += 1;
    }
    prev = t;
  }
  return out;
}

export function addQuiet(a: QuietFigures, b: QuietFigures): QuietFigures {
  return {
    degrades: a.degrades + b.degrades,
    pauses: a.pauses + b.pauses,
    throttledTicks: a.throttledTicks + b.throttledTicks,
  };
}

export const NO_ALARMS: QuietFigures = Object.freeze({ degrades: 0, pauses: 0, throttledTicks: 0 });
