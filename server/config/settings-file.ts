/**
 * A loop settings file (`--config file.json` of start, replay and backtest): read and parsed as a JSON
 * object, or a one-line UserError naming the flag. What it may hold is checked by the loop's own schema
 * (core/control/config.ts) where it is used.
 */
import { readFileSync } from 'node:fs';
import { UserError } from '../../core/common/user-error';
import { describeValue, messageLine } from '@target-health/crawler/events/zod-issues';

export function readSettingsFile(path: string, flag = '--config'): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(
      `${flag}: cannot read ${describeValue(path, 200)} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UserError(
      `${flag}: ${describeValue(path, 200)} is not valid JSON ` +
        `(${messageLine(err instanceof Error ? err.message : String(err))})`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UserError(
      `${flag}: ${describeValue(path, 200)} must hold a JSON object like {"policy": {"concurrency": {"nominal": 8}}}`,
    );
  return value as Record<string, unknown>;
}
