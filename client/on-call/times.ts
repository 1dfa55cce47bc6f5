/**
 * The times `history --from/--to` take: an ISO-8601 time with a zone, a UTC date, `now`, or a time ago
 * (`-6h`, `2d`, `90m`: both `-6h` and `6h` mean six hours before now — a range is always in the past).
 */
import { msToNumber } from '@temporalio/common';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';

const AGO = /^-?\s*\d+(\.\d+)?\s*(ms|s|m|h|d|w)$/i;

const hint =
  'use an ISO-8601 time with a zone (2026-11-24T10:00:00Z), a UTC date (2026-11-24), now, or a time ago like -6h, 2d';

/** `value` as a time, relative ones counted back from `now`; a one-line error naming `flag` otherwise. */
export function parseWhen(flag: string, value: string, now: Date): Date {
  const v = value.trim();
  if (v.toLowerCase() === 'now') return now;
  if (AGO.test(v)) {
    const ms = msToNumber(v.replace(/^-\s*/, '').replace(/\s+/g, '') as Parameters<typeof msToNumber>[0]);
    const t = now.getTime() - ms;
    // Before 1970 or NaN: a typo such as -99999999d.
    if (!Number.isFinite(t) || t < 0)
      throw new UserError(`${flag}: ${describeValue(value)} reaches back before 1970; ${hint}`);
    return new Date(t);
  }
  // The forms `replay --from` takes (client/commands/replay.ts): a zone is required, so a time never
  // depends on the machine's time zone.
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(v);
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(v);
  const t = dateOnly || withZone ? Date.parse(dateOnly ? `${v}T00:00:00Z` : v) : Number.NaN;
  if (!Number.isFinite(t)) throw new UserError(`${flag}: ${describeValue(value)} is not a time; ${hint}`);
  return new Date(t);
}
