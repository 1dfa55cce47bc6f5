/**
 * The per-site workflow's start input, validated in the client before starting and again in the
 * workflow (a hand-started run with a bad payload fails with a message naming the field), and the
 * state a continued run carries. Every setting has a product default; a partial input is filled in.
 */
import { z } from 'zod';
import { tryNormaliseSite } from '@target-health/crawler/events/site';
import { scoringConfigSchema } from '../scoring/config';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { actionPolicySchema } from './controls';
import { loopStateSchema } from './loop-state';

/**
 * Longest duration of any setting: ten years. A window reaching further back than JavaScript dates go
 * (a baseline of 2^53 ms) would make every tick's reads fail on an invalid date.
 */
export const MAX_SETTING_MS = 3_650 * 86_400_000;

const ms = (what: string, min: number) => {
  const error = `expected ${what} in milliseconds (a whole number of at least ${min})`;
  return z
    .int({ error })
    .min(min, { error })
    .max(MAX_SETTING_MS, { error: `expected ${what} in milliseconds of at most ${MAX_SETTING_MS} (ten years)` });
};

const WINDOW_CONFIG_SCHEMA = z
  .strictObject({
    /** Length of the current window each tick judges. */
    currentWindowMs: ms('a window', 1_000).default(15 * 60_000),
    /**
     * Length of the recent window the refusal rules also judge (the last whole minutes of the current
     * one), so an abrupt wall pauses within minutes instead of waiting for the 15-minute window to fill.
     */
    recentWindowMs: ms('a window', 60_000).default(5 * 60_000),
    /** Length of the baseline (the site's normal). */
    baselineMs: ms('a baseline', 60_000).default(14 * 86_400_000),
    /** The most recent stretch left out of the baseline, so one bad day does not become normal. */
    excludeRecentMs: ms('a duration', 0).default(86_400_000),
  })
  .prefault({});

const timeoutsSchema = z
  .strictObject({
    /** Start-to-close timeout of each loop activity: how soon a crashed worker's activity is retried. */
    activityMs: ms('a timeout', 1_000).default(30_000),
  })
  .prefault({});

const SITE_HEALTH_CONFIG_SCHEMA = z.strictObject({
  site: z.string({ error: 'required: a normalised host like shop.example.com' }).superRefine((value, ctx) => {
    const result = tryNormaliseSite(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.error.message });
    else if (result.site !== value)
      ctx.addIssue({ code: 'custom', message: `must be the normalised host "${result.site}"` });
  }),
  /** Time between assessments. */
  tickIntervalMs: ms('a tick interval', 1_000).default(60_000),
  /** Continue-as-new after this many ticks even if the server does not suggest it yet. */
  maxTicksPerRun: z
    .int({ error: 'expected a whole number of at least 1' })
    .min(1, { error: 'expected a whole number of at least 1' })
    .default(1_000),
  window: WINDOW_CONFIG_SCHEMA,
  /** Scoring: weights, smoothing half-life, band thresholds and hysteresis, total refusal, … */
  scoring: scoringConfigSchema().prefault({}),
  /** What each band does: steps, floors, cautious resume, reminders, parser alert threshold. */
  policy: actionPolicySchema().prefault({}),
  timeouts: timeoutsSchema,
});

const SITE_HEALTH_INPUT_SCHEMA = SITE_HEALTH_CONFIG_SCHEMA.extend({
  /** Present only on a continued run: the loop's state, pending human wait included. */
  carried: loopStateSchema().optional(),
});

export type SiteHealthInput = z.input<typeof SITE_HEALTH_INPUT_SCHEMA>;
export type SiteHealthConfig = z.output<typeof SITE_HEALTH_CONFIG_SCHEMA>;
export type ParsedSiteHealthInput = z.output<typeof SITE_HEALTH_INPUT_SCHEMA>;

/** Validates and fills defaults; the error is one line naming each bad field. */
export function parseSiteHealthInput(
  input: unknown,
): { ok: true; value: ParsedSiteHealthInput } | { ok: false; message: string } {
  const parsed = SITE_HEALTH_INPUT_SCHEMA.safeParse(input);
  if (!parsed.success) return { ok: false, message: formatIssues(parsed.error) };
  return { ok: true, value: parsed.data };
}

// Schemas leave a module shared by the workflow sandbox only through functions (workflows/shared-modules.ts).
export const windowConfigSchema = (): typeof WINDOW_CONFIG_SCHEMA => WINDOW_CONFIG_SCHEMA;
export const siteHealthConfigSchema = (): typeof SITE_HEALTH_CONFIG_SCHEMA => SITE_HEALTH_CONFIG_SCHEMA;
export const siteHealthInputSchema = (): typeof SITE_HEALTH_INPUT_SCHEMA => SITE_HEALTH_INPUT_SCHEMA;
