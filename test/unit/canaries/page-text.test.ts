/**
 * Title and visible text of a page for error evidence (core/canaries/page-text.ts): the same text the old
 * regexes gave, in one linear pass whatever the page holds.
 */
import { pageTitle, visibleTextStart } from '../../../core/canaries/page-text';

/** What the evidence used before: quadratic on unclosed tags, kept here as the reference on small pages. */
const reference = (html: string, limit: number) =>
  html
    .replace(/<script\b[\s\S]*?<\/script>|<style\b[\s\S]*?<\/style>|<[^>]+>/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, limit);
const referenceTitle = (html: string) => {
  const m = /<title\b[^>]*>([^<]{0,300})/i.exec(html);
  const t = m?.[1]?.replace(/\s+/g, ' ').trim();
  return t === '' ? undefined : t;
};

const PAGES = [
  '<!doctype html><html><head><title> Service  Unavailable ' +
    '</title><style>body{color:red}</style></head><body><h1>503</h1><p>Try again <b>later</b>.</p><script>var a ' +
    '= "<p>";</script></body></html>',
  '<SCRIPT type="x">alert(1)</SCRIPT>Visible <STYLE>p{}</Style> text',
  '<scripted>kept</scripted> and <stylesheet> too',
  'a < b and c > d, <> stays, <br/>done',
  '<script>never closed <p>hidden?</p>',
  '<style>never closed</style',
  '<p>unclosed tag at the end <a href="x"',
  'plain text without tags',
  '',
  '<title>First</title><title>Second</title>',
  '<title lang="en"\n>Multi\nline</title>',
  '<titles>not a title</titles>',
  '<title>never closed',
  '<title',
];

describe('visibleTextStart and pageTitle read pages like the regexes they replace', () => {
  test.each(PAGES)('%j', (html) => {
    expect(visibleTextStart(html, 160)).toBe(reference(html, 160));
    expect(pageTitle(html)).toBe(referenceTitle(html));
  });

  test('the limit is applied after collapsing white space, on a code-point boundary', () => {
    expect(visibleTextStart(`<p>${'word   '.repeat(100)}</p>`, 20)).toBe('word word word word ');
    expect(visibleTextStart(`${'a'.repeat(19)}😀b`, 20)).toBe('a'.repeat(19));
    expect(pageTitle(`<title>${'t'.repeat(299)}😀</title>`)).toBe('t'.repeat(299));
  });

  test('pages built to make a backtracking regex take minutes are read in one pass', () => {
    expect(visibleTextStart('<'.repeat(2_000_000), 160)).toBe('<'.repeat(160));
    expect(visibleTextStart('<script'.repeat(300_000), 160)).toBe('<script'.repeat(23).slice(0, 160));
    // Unclosed <style> blocks are ordinary tags then: read as spaces.
    expect(visibleTextStart(`${'<style>'.repeat(300_000)}x`, 160)).toBe('x');
    expect(pageTitle('<title'.repeat(300_000))).toBeUndefined();
  });
});
