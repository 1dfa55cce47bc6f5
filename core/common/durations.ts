/**
 * Durations for people, worded one way across the product (the CLI, reviews, replays, notifications, the
 * Temporal UI): `90 s` is `1 min 30 s`, never a rounded `2 min`, because a half-life or a tick that reads
 * rounded is a setting an operator then copies wrong. Exact below a minute (`1.5 s`, `250 ms`); from a
 * minute up to the second (a span measured between two database times carries milliseconds nobody
 * needs). Pure, so the workflow's own texts use it too. Parsing flags is client/durations.ts's job.
 */

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
] as const;

/** `0 s`, `250 ms`, `1.5 s`, `45 s`, `1 min 30 s`, `1 h`, `2 h 5 min`, `1 d 6 h`; negative with a minus sign. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return `${ms} ms`;
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms === 0) return '0 s';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  // Up to milliseconds; toFixed then Number drops the zeros (1.500 → 1.5).
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))} s`;
  let rest = Math.round(ms / 1000) * 1000;
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${unit}`);
    rest -= n * size;
  }
  return parts.join(' ');
}
