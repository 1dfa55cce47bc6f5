/**
 * The Review page's route (docs/console.md, "Review"):
 *   GET /console/sites/:site/review?incident=<time>&tune=1&quiet-days=<n>
 * The review `target-health review <site> --incident <time> --quiet-days <n>` prints (client/review/build.ts),
 * with its chart inline. Without `incident`: the site's latest incident (client/review/latest.ts). The facts
 * and the chart take a second or two; what to tune replays the incident under the current and two candidate
 * settings (half a minute and more), and each quiet day adds a day of ticks per setting. So the page replays
 * only when asked (`tune=1`; `quiet-days`, default 0, implies it), says so, and at most MAX_BUILDING reviews
 * are built at once per API process: the page cannot tie up the API.
 */
import { z } from 'zod';
import { isUserError } from '../../../core/common/user-error';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { parseWhen } from '../../on-call/times';
import { requireKnownSite } from '../../commands/replay';
import { runningSettingsOf } from '../../running-settings';
import { drawReviewChart, type GatheredReview, gatherReview, type ReviewRequest, tuneReview } from '../../review/build';
import { latestIncidentAt } from '../../review/latest';
import { QUIET_LOOKBACK_DAYS } from '../../review/quiet-days';
import { reviewPage, reviewProblemPage } from '../pages/review';
import type { ConsolePageRoutes } from './index';
import { doc, html } from './openapi-doc';

/** How far either side of the incident time the review looks for its start and end (the CLI's defaults). */
const SEARCH_MS = 6 * 3_600_000;
/** Reviews built at once by one API process; more wait for a 429 page (retry in a few seconds). */
export const MAX_BUILDING = 2;

const reviewQuery = z.strictObject({
  incident: z.string().max(100).optional(),
  tune: z.literal('1').optional(),
  'quiet-days': z.string().max(10).optional(),
});

export const registerReviewPage: ConsolePageRoutes = (app, ctx, guard) => {
  const { pool, temporal } = ctx;
  let building = 0;
  app.get<{ Params: { site: string } }>(
    '/console/sites/:site/review',
    {
      config: doc("A site's incident review: timeline, lead time, actions, decisions, chart, what to tune", {
        query: reviewQuery,
        responses: {
          200: html('the review'),
          303: { description: 'to the sign-in page (no live session)' },
          400: html('a bad site name or parameter, named with the fix'),
          404: html('no such site, or no incident to review'),
          429: html('other reviews are being built: retry in a few seconds'),
        },
      }),
    },
    async (request, reply) => {
      const found = await guard.sessionOf(request);
      if (found === null) return guard.toSignIn(reply);
      const { session } = found;
      const problem = (status: number, text: string, site: string | null) =>
        guard.sendPage(
          reply,
          status,
          reviewProblemPage({ site, problem: text, who: session.principal.name, csrfToken: session.csrfToken }),
        );
      const named = tryNormaliseSite(request.params.site);
      if (!named.ok) return problem(400, `site: ${named.error.message}`, null);
      const site = named.site;
      const q = reviewQuery.safeParse(request.query ?? {});
      if (!q.success)
        return problem(
          400,
          'query: only incident (a time in the incident), tune=1 and quiet-days (0 to 7) are understood; ' +
            'remove the others',
          site,
        );
      const rawQuiet = q.data['quiet-days']?.trim() ?? '0';
      const quietDays = /^\d+$/.test(rawQuiet) ? Number(rawQuiet) : NaN;
      if (!(quietDays <= QUIET_LOOKBACK_DAYS))
        return problem(
          400,
          `quiet-days: ${describeValue(rawQuiet)} is not a number of days from 0 to ${QUIET_LOOKBACK_DAYS}; ` +
            'give e.g. quiet-days=3, or leave it out to skip the quiet days',
          site,
        );
      const now = Date.now();
      let t: number;
      const asked = q.data.incident?.trim() || null;
      try {
        if (asked !== null) {
          t = parseWhen('incident', asked, new Date(now)).getTime();
          if (t > now)
            return problem(
              400,
              `incident: ${describeValue(asked)} is in the future; give a time in the incident`,
              site,
            );
        }
        await requireKnownSite(pool, site);
      } catch (err) {
        if (!isUserError(err)) throw err;
        return problem(err.message.startsWith('site:') ? 404 : 400, err.message, site);
      }
      if (asked === null) {
        const latest = await latestIncidentAt(pool, site);
        if (latest === null)
          return problem(
            404,
            `incident: ${site} has never degraded or resisted, so there is no incident to review; give a time ` +
              'with ?incident= to review one anyway',
            site,
          );
        t = latest.getTime();
      }
      if (building >= MAX_BUILDING) {
        void reply.header('retry-after', '5');
        return problem(
          429,
          `${MAX_BUILDING} reviews are being built right now; reload this page in a few seconds`,
          site,
        );
      }
      building += 1;
      try {
        const wanted: ReviewRequest = {
          site,
          t: t!,
          beforeMs: SEARCH_MS,
          afterMs: SEARCH_MS,
          now,
          tickMs: null,
          candidates: [],
          quietDays,
        };
        // The chart is beside the facts: without it (a drawing failure is a bug, logged) the review still stands.
        const drawChart = (g: GatheredReview) =>
          drawReviewChart(pool, g, now).then(
            (d) => ({ svg: d.svg, note: d.covers }),
            (err: unknown) => {
              request.log.warn(
                { err: err instanceof Error ? err.message : String(err) },
                'review page: chart not drawn',
              );
              return {
                svg: null,
                note: 'The chart could not be drawn (logged on the server); `target-health chart` draws it.',
              };
            },
          );
        const gathered = await gatherReview(pool, () => runningSettingsOf({ temporal }, site), wanted);
        const tune = q.data.tune === '1' || quietDays > 0;
        const [tuning, chart] = await Promise.all([
          tune ? tuneReview(pool, gathered, wanted) : null,
          drawChart(gathered),
        ]);
        return guard.sendPage(
          reply,
          200,
          reviewPage({
            review: gathered.facts.review,
            tuning,
            chart,
            asked,
            quietDays,
            who: session.principal.name,
            csrfToken: session.csrfToken,
            now: new Date(now),
          }),
        );
      } catch (err) {
        // No incident around the time asked, a replay too long: the review's own one-line reasons.
        if (!isUserError(err)) throw err;
        return problem(err.message.startsWith('--incident:') ? 404 : 400, err.message.replace(/^--/, ''), site);
      } finally {
        building -= 1;
      }
    },
  );
};
