/**
 * What differs between the settings a running loop has and the ones a new `start` asks for: `start` on a
 * running site used to answer "already running" and silently keep the old settings. Both sides are the
 * parsed settings (every default filled in), so a setting left out of the new start is its default and
 * compares as such.
 */
import type { SiteHealthConfig } from '../core/control/config';

export interface SettingChange {
  /** Dotted path of the setting, e.g. `tickIntervalMs`, `scoring.smoothing.halfLifeMs`. */
  path: string;
  running: string;
  wanted: string;
}

/** 60000 → "1m": the form `--tick` and the docs use; other units fall back to milliseconds. */
export function formatMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms !== 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function show(path: string, value: unknown): string {
  if (value === undefined) return '(not set)';
  if (typeof value === 'number' && /Ms$/.test(path)) return formatMs(value);
  return JSON.stringify(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walk(path: string, running: unknown, wanted: unknown, out: SettingChange[]): void {
  if (isPlainObject(running) && isPlainObject(wanted)) {
    const keys = [...new Set([...Object.keys(running), ...Object.keys(wanted)])].sort();
    for (const key of keys) walk(path === '' ? key : `${path}.${key}`, running[key], wanted[key], out);
    return;
  }
  // Arrays and scalars compare as values: a list of routes is one setting, not one per index.
  if (JSON.stringify(running) !== JSON.stringify(wanted))
    out.push({ path, running: show(path, running), wanted: show(path, wanted) });
}

/** The settings that differ, in a stable order (the site itself is the loop's identity, never a change). */
export function diffSettings(running: SiteHealthConfig, wanted: SiteHealthConfig): SettingChange[] {
  const out: SettingChange[] = [];
  walk('', { ...running, site: undefined }, { ...wanted, site: undefined }, out);
  return out;
}

/**
 * Whether the user set `path` themselves: a key of the settings they gave, or inside an object or list
 * they gave. A setting they left out is not "asked for" — `start shop.example.com` on a loop configured
 * with `--tick 30s` only makes sure it runs.
 */
export function isGiven(path: string, given: unknown): boolean {
  let at: unknown = given;
  for (const key of path.split('.')) {
    if (!isPlainObject(at)) return true;
    if (!Object.prototype.hasOwnProperty.call(at, key)) return false;
    at = at[key];
  }
  return true;
}

/** The changes a new start asks for: settings that differ and that the user gave (`given`, unparsed). */
export function askedChanges(
  running: SiteHealthConfig,
  wanted: SiteHealthConfig,
  given: Readonly<Record<string, unknown>>,
): SettingChange[] {
  return diffSettings(running, wanted).filter((c) => isGiven(c.path, given));
}
