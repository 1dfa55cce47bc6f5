/**
 * What the checks need from an HTML page, as an interface: the rules in this folder stay free of the
 * parser library (cheerio loads undici and Node streams), and server/canary-runner/html.ts supplies the real
 * engine. Definition-time selector checks take the same engine, so a selector is accepted exactly when
 * the engine that evaluates it can compile it.
 */

export interface HtmlDocument {
  /** Matches of `selector` in document order. */
  count(selector: string): number;
  /** White-space-collapsed text (or attribute value) of the first match, undefined when nothing matches. */
  first(selector: string, attr?: string): { value: string | undefined; html: string } | undefined;
}

/** Parses a fetched page once per check batch. */
export type HtmlParser = (body: string) => HtmlDocument;

/** Why a CSS selector cannot be used, or undefined when it compiles. */
export type SelectorCheck = (selector: string) => string | undefined;

export const collapse = (text: string): string => text.replace(/\s+/g, ' ').trim();
