/**
 * Each page's own CSS rules, appended to the layout's base stylesheet (../layout.ts): one stylesheet for the
 * whole console, so the Content-Security-Policy allows exactly its hash. A page module adds its rules here.
 */
export const PAGE_STYLES: readonly string[] = [
  // Decide (./decide.ts): panels of facts, a form per decision, the preview's comparison.
  '.crumbs{margin-bottom:.5rem}.panel{background:#fff;border:1px solid #d5d9de;border-radius:4px;' +
    'padding:.6rem 1rem;margin:0 0 1rem}.panel h2,.panel h3{margin:.2rem 0 .5rem;font-size:1.05rem}',
  '.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0 0 .5rem}' +
    '.facts dt{font-weight:600}.facts dd{margin:0}',
  '.decisions{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:0 1rem}',
  'textarea{font:inherit;width:100%;box-sizing:border-box;padding:.35rem .5rem;border:1px solid #8a939e;' +
    'border-radius:4px;margin-bottom:.5rem}',
  '.decision fieldset{border:1px solid #d5d9de;margin:0 0 .5rem}.decision fieldset label{display:inline;' +
    'font-weight:400}.decision .pair{display:flex;flex-wrap:wrap;gap:.5rem}.decision .pair label{display:block}',
  'table.compare{min-width:0}tr.changed td{background:#fff6d6}',
  'pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#eef1f4;padding:.5rem;border-radius:4px}',
  '@media (max-width:48rem){.facts{grid-template-columns:1fr}.facts dd{margin-bottom:.3rem}}',
];
