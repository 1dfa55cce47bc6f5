/**
 * The HTML engine of canary checks: CSS selectors over a fetched page with cheerio (css-select
 * underneath), behind the interfaces of core/canaries/html-document.ts. Selectors are compiled when a canary
 * is defined (`selectorProblem`), so a typo is refused then; at run time the page is parsed once per
 * check batch. `root().find()` is used instead of `$(selector)` because `$()` treats a string starting
 * with "<" as HTML to create, not a selector to match.
 */
import type * as CheerioModule from 'cheerio';
import type { CheerioAPI } from 'cheerio';
import { collapse, type HtmlDocument } from '../../core/canaries/html-document';

type Cheerio = typeof CheerioModule;
let cheerio: Cheerio | undefined;
let emptyDocument: CheerioAPI | undefined;

/**
 * cheerio takes about a quarter of a second to load, and every `target-health` command loads this
 * module through the CLI's command table: load it on first use instead.
 */
function lib(): Cheerio {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  cheerio ??= require('cheerio') as Cheerio;
  return cheerio;
}

/** Why a selector cannot be used, or undefined when it compiles. */
export function selectorProblem(selector: string): string | undefined {
  try {
    emptyDocument ??= lib().load('');
    emptyDocument.root().find(selector);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message.trim() || err.name : String(err);
  }
}

export function parseHtml(body: string): HtmlDocument {
  const $: CheerioAPI = lib().load(body);
  return {
    count: (selector) => $.root().find(selector).length,
    first: (selector, attr) => {
      const match = $.root().find(selector).first();
      if (match.length === 0) return undefined;
      const value = attr === undefined ? collapse(match.text()) : match.attr(attr);
      return { value: value === undefined ? undefined : collapse(value), html: collapse($.html(match)) };
    },
  };
}
