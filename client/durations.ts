import { msToNumber } from '@temporalio/common';
import { UserError } from '../common/user-error';

/** Parses "90s", "5m", "1h" or a number of milliseconds, for `--tick` style options. */
export function parseDuration(option: string, value: string): number {
  let ms: number;
  try {
    ms = /^\d+$/.test(value) ? Number(value) : msToNumber(value as Parameters<typeof msToNumber>[0]);
  } catch {
    throw new UserError(`${option}: "${value}" is not a duration; use e.g. 30s, 5m, 1h`);
  }
  if (!Number.isFinite(ms) || ms <= 0) throw new UserError(`${option}: "${value}" must be a positive duration, e.g. 30s, 5m, 1h`);
  return ms;
}
