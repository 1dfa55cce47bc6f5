/**
 * The per-site workflow's start input (validated in the client before starting, and again in the
 * workflow so a hand-started run with a bad payload fails with a clear message) and the state it
 * carries across continue-as-new.
 */
import { z } from 'zod';

export const siteHealthInputSchema = z.object({
  site: z.string().min(1, 'site: must be a normalised host like shop.example.com'),
  /** Time between assessments. */
  tickIntervalMs: z.number().int().min(1_000, 'tickIntervalMs: must be at least 1000 (1 s)').default(60_000),
  /** Continue-as-new after this many ticks even if the server does not suggest it yet. */
  maxTicksPerRun: z.number().int().min(1, 'maxTicksPerRun: must be at least 1').default(1_000),
  /** Present only on a continued run. */
  carried: z
    .object({
      tick: z.number().int().min(0),
      chainId: z.string().min(1),
    })
    .optional(),
});

export type SiteHealthInput = z.input<typeof siteHealthInputSchema>;
export type SiteHealthConfig = z.output<typeof siteHealthInputSchema>;
