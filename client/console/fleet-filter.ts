/**
 * The Fleet page's filters, as its GET form sends them (band, a name pattern, only those waiting for a
 * person): parsed the same way for the page and for its live stream, so the stream shows what the page does.
 */
import { z } from 'zod';
import { LISTED_BANDS } from '../../server/api/schemas/sites';
import type { Fleet } from '../../server/fleet/fleet';

export const fleetQuery = z.strictObject({
  band: z.union([z.literal(''), z.enum(LISTED_BANDS)]).default(''),
  awaiting: z.literal('true').optional(),
  site: z.string().max(200).default(''),
});

export interface FleetForm {
  band: string;
  awaiting: boolean;
  site: string;
}

/**
 * The form as typed and the filter it means; `ok` false when the query was not one the form sends (an edited URL):
 * then no filter, so the page shows the whole fleet (with a 400) rather than an error page without the form.
 */
export function fleetFilterOf(query: unknown): { ok: boolean; form: FleetForm; filter: Fleet['filter'] } {
  const q = fleetQuery.safeParse(query ?? {});
  const band = q.success ? q.data.band : '';
  const form = {
    band,
    awaiting: q.success && q.data.awaiting === 'true',
    site: q.success ? q.data.site.trim() : '',
  };
  return {
    ok: q.success,
    form,
    filter: {
      bands: band === '' ? null : [band],
      awaiting: form.awaiting,
      site: form.site === '' ? [] : [form.site],
    },
  };
}
