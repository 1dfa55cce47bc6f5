import { msToNumber } from '@temporalio/common';
import { UserError } from '../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';

/**
 * The longest duration an option takes: what a Node timer (and PostgreSQL's statement_timeout) can wait,
 * 2^31 - 1 ms, about 24.8 days. A longer one would not wait longer: Node fires it after 1 ms instead.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** Parses "90s", "5m", "1h" or a number of milliseconds, for `--tick` style options. */
export function parseDuration(option: string, value: string): number {
  let ms: number;
  try {
    ms = /^\d+$/.test(value) ? Number(value) : msToNumber(value as Parameters<typeof msToNumber>[0]);
  } catch {
    throw new UserError(`${option}: ${describeValue(value)} is not a duration; use e.g. 30s, 5m, 1h`);
  }
  if (!Number.isFinite(ms) || ms <= 0)
    throw new UserError(`${option}: ${describeValue(value)} must be a positive duration, e.g. 30s, 5m, 1h`);
  if (ms > MAX_DURATION_MS)
    throw new UserError(`${option}: ${describeValue(value)} is longer than 24 days; use e.g. 30s, 5m, 1h`);
  return ms;
}
