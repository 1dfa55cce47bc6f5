/**
 * HTML for the console's server-rendered pages, escaped by construction: `markup` is a tagged template
 * whose every interpolated value is escaped unless it is already {@link SafeHtml} (another `markup`
 * fragment). It is named `markup`, not `html`, because Prettier reformats templates tagged `html` and would
 * change the whitespace of what a page sends. Site names, reasons and token names come from crawlers and
 * operators, so a value reaching a page unescaped would be a stored XSS; with this helper forgetting to escape
 * is not possible, and emitting raw markup needs the explicit, greppable {@link trustedHtml}.
 */

/** Markup that is safe to insert as is: built by `markup` (its values escaped) or declared by trustedHtml. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML: the five characters that can end a text node or an attribute value, as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** What may be interpolated: text and numbers (escaped), fragments, lists of them; null/undefined/false: nothing. */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function markup(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]!));
  return new SafeHtml(out);
}

/** Markup written by this program (a constant stylesheet, a script), not built from any input. */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
