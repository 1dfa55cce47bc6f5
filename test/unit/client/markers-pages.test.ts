/**
 * Reading a user's labelled pages (manifest.json or <class>--<name>.html) and printing the evaluation:
 * problems name the file and the field; the tables carry a row per vendor, side by side.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLabelledPages } from '../../../client/markers/labelled-pages';
import { formatComparison, formatRecallPrecision, formatSummary } from '../../../client/markers/report';
import { evaluate } from '../../../core/signals/evaluate';

const root = mkdtempSync(join(tmpdir(), 'th-markers-pages-'));
const dirWith = (name: string, files: Record<string, string>): string => {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
};

describe('readLabelledPages', () => {
  it('labels files by name: class, then vendor up to the next --', () => {
    const dir = dirWith('named', {
      'challenge--shop-captcha--2.html': 'a',
      'ok--home.html': 'b',
      'notes.txt': 'ignored',
    });
    expect(readLabelledPages(dir)).toEqual([
      { id: 'challenge--shop-captcha--2.html', body: 'a', label: { class: 'challenge', vendor: 'shop-captcha' } },
      { id: 'ok--home.html', body: 'b', label: { class: 'ok', vendor: 'none' } },
    ]);
  });

  it('reads a manifest in the corpus format, other entry fields ignored', () => {
    const dir = dirWith('manifest', {
      'wall.html': '<p>no</p>',
      'manifest.json': JSON.stringify({
        version: 1,
        pages: [
          {
            file: 'wall.html',
            label: { class: 'hard_block', vendor: 'Shop', status: 403, headers: { 'x-waf': 'deny' } },
            notes: 'kept',
          },
        ],
      }),
    });
    expect(readLabelledPages(dir)).toEqual([
      {
        id: 'wall.html',
        body: '<p>no</p>',
        label: { class: 'hard_block', vendor: 'Shop', status: 403, headers: { 'x-waf': 'deny' } },
      },
    ]);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'a bad class',
      {
        'manifest.json': JSON.stringify({ pages: [{ file: 'a.html', label: { class: 'blocked', vendor: 'x' } }] }),
        'a.html': '',
      },
      /manifest\.json: pages\[0\]\.label\.class: must be one of challenge, hard_block/,
    ],
    [
      'an unknown label field',
      {
        'manifest.json': JSON.stringify({
          pages: [{ file: 'a.html', label: { class: 'ok', vendor: 'x', colour: 1 } }],
        }),
        'a.html': '',
      },
      /pages\[0\]\.label: unknown field "colour"/,
    ],
    [
      'a missing file',
      { 'manifest.json': JSON.stringify({ pages: [{ file: 'gone.html', label: { class: 'ok', vendor: 'none' } }] }) },
      /pages\[0\]\.file: "gone\.html" does not exist/,
    ],
    ['broken JSON', { 'manifest.json': '{' }, /manifest\.json: is not valid JSON/],
    ['a file without a class', { 'page.html': '' }, /page\.html: name it <class>--<vendor or anything>\.html/],
    ['nothing to read', { 'readme.txt': '' }, /has no manifest\.json and no <class>--<name>\.html files/],
  ])('%s is refused, naming it', (name, files, message) => {
    const dir = dirWith(name.replace(/\W+/g, '-'), files);
    expect(() => readLabelledPages(dir)).toThrow(message);
  });
});

describe('report tables', () => {
  const pages = [
    { id: 'a', body: 'captcha', label: { class: 'challenge' as const, vendor: 'A' } },
    { id: 'b', body: 'plain', label: { class: 'ok' as const, vendor: 'none' } },
  ];
  const us = evaluate(pages, (e) => ({ outcome: e.bodySample === 'captcha' ? 'challenge' : 'ok' }));
  const them = evaluate(pages, () => ({ outcome: 'ok' }));

  it('summary: one row per mode, both classifiers side by side', () => {
    const lines = formatSummary([
      { name: 'us', evaluation: us },
      { name: 'them', evaluation: them },
    ])
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[2]).toMatch(
      /^real status and headers +100\.0 % 1\/1 +100\.0 % 1\/1 +0\.0 % 0\/1 +0\.0 % 0\/1 +0\.0 % 0\/1 +0\.0 % 0\/1$/,
    );
  });

  it('per vendor, as text and as Markdown', () => {
    const text = formatComparison([{ name: 'us', evaluation: us }]);
    expect(text).toMatch(/\nA +100\.0 % 1\/1 +100\.0 % 1\/1 +– –\n/);
    const md = formatComparison([{ name: 'us', evaluation: us }], true);
    expect(md).toContain('| A | 100.0 % 1/1 | 100.0 % 1/1 | – – |');
    expect(formatRecallPrecision(us.modes[2]!)).toMatch(/^body only, as a 200\n/);
  });
});
