/**
 * Each page's own CSS rules, appended to the layout's base stylesheet (../layout.ts): one stylesheet for the
 * whole console, so the Content-Security-Policy allows exactly its hash. A page module adds its rules here.
 */
export const PAGE_STYLES: readonly string[] = [
  // The Site page (./site.ts): sections, a facts list, compact tables, the chart scaled to the screen.
  '.site section{background:#fff;border:1px solid #d5d9de;border-radius:4px;padding:.2rem 1rem 1rem;margin:1rem 0}' +
    '.site h2{font-size:1.1rem}.site h3{font-size:1rem}' +
    '.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}.facts dt{font-weight:600}' +
    '.facts dd{margin:0}table.compact{min-width:40rem}tr.reason th,tr.reason td{background:#fff4e5}' +
    '.links{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}' +
    '.links .action{background:#1f5fa8;color:#fff;padding:.35rem .8rem;border-radius:4px;text-decoration:none}' +
    '.chart{margin:0;overflow-x:auto}.chart svg{max-width:100%;height:auto}' +
    '.settings{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}.settings dd{margin:0}' +
    'code{overflow-wrap:anywhere}' +
    '@media (max-width:48rem){table.compact{min-width:0}.facts,.settings{grid-template-columns:1fr}' +
    '.facts dd,.settings dd{margin:0 0 .4rem}}',
  // Decide (./decide.ts): panels (of .facts, above), a form per decision, the preview's comparison.
  '.crumbs{margin-bottom:.5rem}.panel{background:#fff;border:1px solid #d5d9de;border-radius:4px;' +
    'padding:.6rem 1rem;margin:0 0 1rem}.panel h2,.panel h3{margin:.2rem 0 .5rem;font-size:1.05rem}',
  '.decisions{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:0 1rem}',
  'textarea{font:inherit;width:100%;box-sizing:border-box;padding:.35rem .5rem;border:1px solid #8a939e;' +
    'border-radius:4px;margin-bottom:.5rem}',
  '.decision fieldset{border:1px solid #d5d9de;margin:0 0 .5rem}.decision fieldset label{display:inline;' +
    'font-weight:400}.decision .pair{display:flex;flex-wrap:wrap;gap:.5rem}.decision .pair label{display:block}',
  'table.compare{min-width:0}tr.changed td{background:#fff6d6}',
  'pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#eef1f4;padding:.5rem;border-radius:4px}',
  // The Review page (./review.ts); .crumbs and .facts are Decide's and the Site page's, above.
  '.title{font-size:1.2rem;margin:.3rem 0}',
  'section{margin:1.25rem 0}section h2{font-size:1.05rem;border-bottom:1px solid #d5d9de;padding-bottom:.2rem}',
  'table.review{min-width:48rem}',
  '.review-chart{margin:0;background:#fff;border:1px solid #d5d9de;padding:.5rem}',
  '@media (max-width:48rem){table.review{min-width:0}}',
];
