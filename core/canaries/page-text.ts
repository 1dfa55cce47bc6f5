/**
 * A page's title and the start of its visible text, for the evidence of error pages. One linear pass
 * each: the page is written by the crawled site, and the regexes these replace (`<[^>]+>` and friends)
 * took quadratic time on a page of unclosed tags — 0.6 s for 20 KB of "<", hours for a 2 MB body — on the
 * worker's main thread, where a site could stall its own loop.
 */
import { cutText } from '@target-health/crawler/events/well-formed';
import { collapse } from './html-document';

const BLOCKS = ['script', 'style'] as const;
type Block = (typeof BLOCKS)[number];
const CLOSE: Record<Block, RegExp> = { script: /<\/script>/gi, style: /<\/style>/gi };
const WORD = /[A-Za-z0-9_]/;

/**
 * The first `limit` characters (cut on a code-point boundary) of the page's text: `<script>` and `<style>` blocks
 * dropped, every other tag read as a space, white space collapsed.
 */
export function visibleTextStart(html: string, limit: number): string {
  const pieces: string[] = [];
  let raw = 0;
  let nextCheck = limit;
  // Once a search finds nothing from some point, it finds nothing from any later point either: remember
  // that instead of searching again (which is what made the regex quadratic).
  let noTagEnd = false;
  const noBlockEnd: Record<Block, boolean> = { script: false, style: false };
  const push = (text: string): boolean => {
    pieces.push(text);
    raw += text.length;
    if (raw < nextCheck) return false;
    nextCheck = raw * 2;
    return collapse(pieces.join('')).length > limit;
  };
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      push(html.slice(i));
      break;
    }
    if (push(html.slice(i, lt))) break;
    const block = blockAt(html, lt);
    if (block !== undefined && !noBlockEnd[block]) {
      const close = CLOSE[block];
      close.lastIndex = lt + 1 + block.length;
      const end = close.exec(html);
      if (end !== null) {
        push(' ');
        i = end.index + end[0].length;
        continue;
      }
      noBlockEnd[block] = true;
    }
    if (!noTagEnd && lt + 1 < html.length && html[lt + 1] !== '>') {
      const gt = html.indexOf('>', lt + 1);
      if (gt >= 0) {
        push(' ');
        i = gt + 1;
        continue;
      }
      noTagEnd = true;
    }
    if (push('<')) break;
    i = lt + 1;
  }
  return cutText(collapse(pieces.join('')), limit, '');
}

/** `<script` or `<style` (any case) starting a tag at `at`. */
function blockAt(html: string, at: number): Block | undefined {
  for (const block of BLOCKS) {
    const end = at + 1 + block.length;
    if (html.slice(at + 1, end).toLowerCase() === block && !WORD.test(html[end] ?? '')) return block;
  }
  return undefined;
}

const TITLE = /<title\b/i;

/** The text of the first `<title>` (at most 300 characters, collapsed), undefined when there is none or it is empty. */
export function pageTitle(html: string): string | undefined {
  const start = TITLE.exec(html);
  if (start === null) return undefined;
  const gt = html.indexOf('>', start.index + start[0].length);
  if (gt < 0) return undefined;
  const text = /^[^<]*/.exec(cutText(html.slice(gt + 1, gt + 302), 300, ''))?.[0] ?? '';
  const title = collapse(text);
  return title === '' ? undefined : title;
}
