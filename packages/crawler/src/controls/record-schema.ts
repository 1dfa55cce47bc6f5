/**
 * The controls record as it arrives (the API's `controls` and `snapshot` events), checked before it is
 * held: a crawler must never obey a half-read or garbled record. Unknown fields are ignored, so a newer
 * server adding one does not break an older client.
 */
import * as z from '../zod';
import type { HealthBand, SiteControls } from './types';

const BANDS = ['learning', 'healthy', 'degrading', 'resisting', 'stopped'] as const satisfies readonly HealthBand[];

export const siteControlsSchema = z.object({
  site: z.string().min(1),
  concurrencyLimit: z.number().int().min(1),
  revisitMultiplier: z.number().min(1),
  paused: z.boolean(),
  canaryOnly: z.boolean(),
  effectiveCostMultiplier: z.number().min(1),
  band: z.enum(BANDS),
  reason: z.string(),
  version: z.number().int().min(0),
  updatedAt: z.string(),
}) satisfies z.ZodType<SiteControls>;

export const snapshotSchema = z.object({ sites: z.array(siteControlsSchema) });

/** The record without fields this client does not know (the schema strips them). */
export function parseSiteControls(value: unknown): { ok: true; record: SiteControls } | { ok: false; error: string } {
  const r = siteControlsSchema.safeParse(value);
  return r.success
    ? { ok: true, record: r.data }
    : { ok: false, error: r.error.issues.map((i) => `${i.path.join('.') || 'record'}: ${i.message}`).join('; ') };
}
