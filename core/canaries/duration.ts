/**
 * Durations as people write them in canary definitions and flags: "90s", "15m", "1h", "1d", "500ms".
 * Our own tiny parser (not `ms`): it must reject negatives and garbage with a message that says what a
 * valid value looks like, and it must be importable from pure code.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(-?\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/i;

/** Milliseconds of a duration string, or undefined when it is not one (negative values parse; callers bound them). */
export function parseDurationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const [, amount = '', unit = ''] = match;
  const ms = Number(amount) * (UNIT_MS[unit.toLowerCase()] ?? NaN);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** "15m", "1h30m"-free compact form for messages and listings: the largest unit that divides exactly. */
export function formatDurationMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
