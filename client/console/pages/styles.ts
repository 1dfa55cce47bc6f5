/**
 * Each page's own CSS rules, appended to the layout's base stylesheet (../layout.ts): one stylesheet for the
 * whole console, so the Content-Security-Policy allows exactly its hash. A page module adds its rules here.
 */
export const PAGE_STYLES: readonly string[] = [];
