/**
 * Tooltips in the written SVG. Vega shows a mark's tooltip only through a live view's event handler; its SVG
 * keeps the text as the item's `aria-label` (the description the marks panel gives each point and label). A
 * `<title>` child is what a browser shows on hover over a static SVG, so each element Vega labelled gets one
 * with the same text: a label cut to fit still tells its whole story on hover. resvg draws no `<title>`, so the
 * PNG is unchanged.
 */

/** An element Vega wrote with an aria-label (always its first attribute on mark items), self-closing or not. */
const LABELLED = /<(path|text|line|rect)( aria-label="([^"]*)"[^>]*?)(\/?)>/g;

export function withTitles(svg: string): string {
  // The attribute's text is already escaped for XML (&amp; &lt; &quot; &#xA;), which is valid element text too.
  return svg.replace(LABELLED, (_all, tag: string, attrs: string, label: string, selfClosing: string) =>
    selfClosing === '/'
      ? `<${tag}${attrs}><title>${label}</title></${tag}>`
      : `<${tag}${attrs}><title>${label}</title>`,
  );
}
