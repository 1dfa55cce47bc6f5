/**
 * The settings the CLI needs to talk to `npm start`'s stack, written to `<data dir>/cli.env` instead of
 * the terminal: the banner shows the database URL with its password masked (terminals are scrolled
 * back, screen-shared and pasted into tickets), and the file, readable by its owner only, is what a
 * person sources in another terminal. It sits beside the PostgreSQL data files, which anyone able to
 * read it could read anyway.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';

export const CLI_SETTINGS_FILE = 'cli.env';

export interface WrittenCliSettings {
  path: string;
  /** Relative to the working directory when inside it, quoted for sh when needed. */
  shownPath: string;
  names: string[];
}

/** `'value'` for sh: safe whatever the value holds. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

export function writeCliSettings(dataDir: string, settings: Readonly<Record<string, string>>): WrittenCliSettings {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, CLI_SETTINGS_FILE);
  const names = Object.keys(settings);
  const text = [
    '# Written by `npm start` for the CLI in another terminal: set -a; . ./cli.env; set +a',
    '# Holds the database password when PostgreSQL is the embedded one: keep it to yourself.',
    ...names.map((name) => `${name}=${shellQuote(settings[name]!)}`),
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  // The mode above applies only when the file is created: an older copy may have other permissions.
  chmodSync(path, 0o600);
  const rel = relative(process.cwd(), path);
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  // `. file` without a slash would search PATH.
  const shown = inside ? (rel.includes('/') ? rel : `./${rel}`) : path;
  return { path, shownPath: shellQuote(shown), names };
}

/** The inverse of shellQuote: `'it'\''s'` → `it's`, a bare word as is. */
export function shellUnquote(text: string): string {
  if (!text.startsWith("'")) return text;
  return text.slice(1, -1).replace(/'\\''/g, "'");
}

/** The settings an earlier `npm start` wrote to `<data dir>/cli.env`, or undefined when there is none. */
export function readCliSettings(dataDir: string): Record<string, string> | undefined {
  const path = join(dataDir, CLI_SETTINGS_FILE);
  if (!existsSync(path)) return undefined;
  const settings: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) settings[m[1]!] = shellUnquote(m[2]!);
  }
  return settings;
}
