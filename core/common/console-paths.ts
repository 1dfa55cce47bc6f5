/**
 * The console's addresses of a site's pages. The console renders them (client/console) and notifications link
 * to them (activities/apply-actions.ts), so they live here, below both.
 */

/** `/console/sites/<site>` and its sub-pages (`/decide`, `/review`), the name percent-encoded. */
export const sitePath = (site: string, sub = ''): string => `/console/sites/${encodeURIComponent(site)}${sub}`;

/** A site page's full address under the console's base URL (no trailing slash). */
export const siteConsoleUrl = (consoleUrl: string, site: string, sub = ''): string =>
  `${consoleUrl}${sitePath(site, sub)}`;
