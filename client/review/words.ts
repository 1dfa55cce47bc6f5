/**
 * The review's words for its figures (pure): times, rates, spans, lead and moments against the onset. The
 * Markdown (./render.ts) and the console's Review page say them alike.
 */
import { formatDuration } from '../../core/common/durations';
import { plural } from '../../core/common/plural';
import type { MilestoneJson, RateSpanJson } from './schema';

/** `2026-11-24 10:02:00Z`. */
export const when = (iso: string | null): string => (iso === null ? '—' : `${iso.slice(0, 19).replace('T', ' ')}Z`);
export const percent = (rate: number | null): string => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);

export const perMinute = (s: RateSpanJson): string => (s.requests === 0 ? '0' : s.perMinute.toFixed(1));
export const spanText = (s: RateSpanJson): string =>
  s.requests === 0 ? 'no traffic' : `${percent(s.rate)} of ${plural(s.requests, 'request')}`;
export function leadText(ms: number): string {
  if (ms === 0) return 'at the moment refusals peaked';
  return ms > 0 ? `${formatDuration(ms)} before refusals peaked` : `${formatDuration(-ms)} after refusals peaked`;
}

/** `22 min after the onset`, `at the onset`, `3 min before the onset` (`as refusals passed half` when 0). */
export function relative(ms: number | null, what: string): string | null {
  if (ms === null) return null;
  if (ms === 0) return what.startsWith('the ') ? `at ${what}` : `as ${what}`;
  return ms > 0 ? `${formatDuration(ms)} after ${what}` : `${formatDuration(-ms)} before ${what}`;
}

/** `22 min after the onset, 21 min after refusals passed half`. */
export function againstOnset(m: MilestoneJson): string {
  return (
    [relative(m.afterOnsetMs, 'the onset'), relative(m.afterHalfMs, 'refusals passed half')]
      .filter((x): x is string => x !== null)
      .join(', ') || 'no onset or half to measure it from'
  );
}
