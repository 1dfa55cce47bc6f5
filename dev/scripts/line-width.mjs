// `npm run lint` step: no source line wider than 120 columns, in every tracked TypeScript, JavaScript and
// Python file. Prettier formats the TypeScript and JavaScript and ruff the Python, but neither breaks a
// long string, comment or regular expression; this check covers what they leave, in both languages.
// Width is counted in code points, as an editor's column counter does.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import process from 'node:process';

const WIDTH = 120;
const SOURCE = /\.(?:[cm]?[jt]s|py)$/;
const IGNORED = [/^packages\/[^/]+\/dist\//, /^dev\/bench\/peer-shims\//, /^test\/fixtures\//];

const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\0')
  .filter((f) => SOURCE.test(f) && !IGNORED.some((r) => r.test(f)));

const wide = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // listed by git but deleted in the work tree
  }
  text.split('\n').forEach((line, i) => {
    const width = [...line.replace(/\r$/, '')].length;
    if (width > WIDTH) wide.push(`${file}:${i + 1}: ${width} columns`);
  });
}
if (wide.length > 0) {
  process.stderr.write(
    `${wide.join('\n')}\n${wide.length} line(s) wider than ${WIDTH} columns: cut the string into pieces ` +
      `('a ' + 'b'; in Python "a " "b"), wrap the comment, or name part of the expression ` +
      `(CONTRIBUTING.md, "Style")\n`,
  );
  process.exit(1);
}
