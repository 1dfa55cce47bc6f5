/** The console's paths of a site's pages, the name percent-encoded, and the Site page's chart ranges. */

/** `/console/sites/<site>` and its sub-pages (`/decide`, `/review`): shared with the notifications' links. */
export { sitePath } from '../../core/common/console-paths';

/** The Site page's chart periods (`?range=`): the last day (the default) and the last two weeks. */
export const CHART_RANGES = { '1d': 86_400_000, '14d': 14 * 86_400_000 } as const;
export type ChartRange = keyof typeof CHART_RANGES;
