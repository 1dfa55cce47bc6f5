/**
 * The docs and `--help` say the same: every option a command takes is documented in the page its `--help`
 * points users to, and every flag a page lists for that command exists. The options come from the CLI's own
 * definitions (client/cli.ts), not from a copy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../client/cli';
import type { CliContext } from '../../client/context';

const ROOT = join(__dirname, '..', '..');
const unused = (): CliContext => {
  throw new Error('no command runs here');
};
/** One command as the CLI defines it (only that command's module is loaded, as when a user runs it). */
const command = (name: string): Command =>
  buildProgram(unused, ['node', 'target-health', name]).commands.find((c) => c.name() === name)!;
const flags = (c: Command): string[] => c.options.map((o) => o.long!).filter((f) => f !== '--help');

/** The part of a page about one command: from its heading to the next heading of the same level or above. */
function section(file: string, heading: string | null): string {
  const text = readFileSync(join(ROOT, 'docs', file), 'utf8');
  if (heading === null) return text;
  const start = text.indexOf(`\n${heading}`);
  if (start < 0) throw new Error(`${file}: no heading ${heading}`);
  const level = heading.match(/^#+/)![0].length;
  const rest = text.slice(start + heading.length + 1);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next < 0 ? rest : rest.slice(0, next);
}

const pages: Array<[string, string, string | null]> = [
  ['review', 'review.md', null],
  ['history', 'on-call.md', '## `target-health history <site>`'],
  ['explain', 'on-call.md', '## `target-health explain <site> [--at T]`'],
  ['chart', 'charts.md', null],
  ['replay', 'replay.md', null],
  ['tune', 'tuning.md', null],
];

describe.each(pages)('%s: its options in docs/%s', (name, file, heading) => {
  const c = command(name);
  const doc = section(file, heading);

  test('every option of --help is documented', () => {
    const missing = flags(c).filter((f) => !new RegExp(`${f.replace(/-/g, '\\-')}(?![\\w-])`).test(doc));
    expect(missing).toEqual([]);
  });

  test("every flag in the page's option table is one the command takes", () => {
    const table = doc
      .split('\n')
      .filter((l) => l.startsWith('| `--'))
      .flatMap((l) => [...l.split('|')[1]!.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]));
    const known = new Set([...flags(c), '--no-chart']);
    expect(table.filter((f) => !known.has(f))).toEqual([]);
  });
});
