/**
 * Each page's own CSS rules, appended to the layout's base stylesheet (../layout.ts): one stylesheet for the
 * whole console, so the Content-Security-Policy allows exactly its hash. A page module adds its rules here.
 */
export const PAGE_STYLES: readonly string[] = [
  // The Review page (./review.ts).
  '.crumbs{margin-bottom:.5rem}.title{font-size:1.2rem;margin:.3rem 0}',
  'section{margin:1.25rem 0}section h2{font-size:1.05rem;border-bottom:1px solid #d5d9de;padding-bottom:.2rem}',
  '.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}.facts dt{font-weight:600}',
  '.facts dd{margin:0}table.review{min-width:48rem}',
  '.chart{margin:0;background:#fff;border:1px solid #d5d9de;padding:.5rem}.chart svg{max-width:100%;height:auto}',
  '@media (max-width:48rem){.facts{grid-template-columns:1fr}.facts dd{margin-bottom:.4rem}table.review{min-width:0}}',
];
