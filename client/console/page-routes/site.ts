/**
 * `GET /console/sites/:site[?range=14d]`: the Site page (docs/console.md, "Site"). A name that is not a host is
 * a 400 page naming the field; a site without a running loop a 404 page with the way back to the fleet.
 */
import { z } from 'zod';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { badSiteRequestPage, noSitePage, sitePage } from '../pages/site';
import { CHART_RANGES, type ChartRange } from '../paths';
import { readSitePage } from '../site-read';
import type { ConsolePageRoutes } from './index';
import { doc, html } from './openapi-doc';

const params = z.strictObject({ site: z.string() });
const query = z.strictObject({
  range: z
    .enum(Object.keys(CHART_RANGES) as [ChartRange, ...ChartRange[]], {
      error: `expected 1d (the last day, the default) or 14d (the last two weeks)`,
    })
    .default('1d'),
});

export const siteRoutes: ConsolePageRoutes = (app, ctx, guard) => {
  app.get(
    '/console/sites/:site',
    {
      config: doc("The Site page: a site's health now, explained, and what it served", {
        params,
        query,
        responses: {
          200: html('the page'),
          303: { description: 'to the sign-in page (no live session)' },
          400: html('the site name or a query parameter is invalid'),
          404: html('no loop runs for this site'),
        },
      }),
    },
    async (request, reply) => {
      const found = await guard.sessionOf(request);
      if (found === null) return guard.toSignIn(reply);
      const { principal, csrfToken } = found.session;
      const bad = (problem: string) =>
        guard.sendPage(reply, 400, badSiteRequestPage(problem, principal.name, csrfToken));
      const site = tryNormaliseSite(params.parse(request.params).site);
      if (!site.ok) return bad(`site: ${site.error.message}`);
      const q = query.safeParse(request.query ?? {});
      if (!q.success) return bad(formatIssues(q.error, { root: 'query' }));
      const data = await readSitePage({ client: await ctx.temporal(), pool: ctx.pool }, site.site, q.data.range);
      if (data === null) return guard.sendPage(reply, 404, noSitePage(site.site, principal.name, csrfToken));
      return guard.sendPage(reply, 200, sitePage({ data, who: principal.name, csrfToken }));
    },
  );
};
