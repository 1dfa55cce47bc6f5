/**
 * `--watch [interval]`: render, wait, render again until Ctrl-C (which ends the command with exit 0).
 * In a terminal each frame replaces the previous one (cursor home, clear screen); otherwise (a pipe, a
 * file, a log) each frame is printed after the last one, so nothing is lost.
 */
import { isUserError } from '../../core/common/user-error';
import { parseDuration } from '../durations';

export const DEFAULT_WATCH_MS = 5_000;

/** The interval of `--watch` (true when given without a value). */
export function watchInterval(value: string | true): number {
  return value === true ? DEFAULT_WATCH_MS : parseDuration('--watch', value);
}

export interface WatchOptions {
  intervalMs: number;
  /** One frame (the whole text to show). */
  render: () => Promise<string>;
  write: (text: string) => void;
  writeError: (line: string) => void;
  /** A terminal: frames replace each other. */
  tty: boolean;
  /** A header before each frame (none for --json: one document per line). */
  header?: (at: Date) => string;
}

export async function watch(o: WatchOptions): Promise<void> {
  let stopped = false;
  let wake: (() => void) | undefined;
  const stop = (): void => {
    stopped = true;
    wake?.();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    for (let frame = 0; !stopped; frame += 1) {
      try {
        const text = await o.render();
        if (stopped) break;
        const header = o.header ? `${o.header(new Date())}\n` : '';
        o.write(o.tty ? `\x1b[H\x1b[2J${header}${text}` : `${header}${text}`);
      } catch (err) {
        // A mistake in what was typed fails at once; a passing outage (the database or Temporal
        // restarting) is reported and the next refresh tries again.
        if (frame === 0 && isUserError(err)) throw err;
        o.writeError(
          `refresh failed (trying again in ${o.intervalMs / 1000}s): ` +
            `${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`,
        );
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, o.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
