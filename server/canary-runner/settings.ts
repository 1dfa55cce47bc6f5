/**
 * Canary settings from the environment, validated with zod like server/config/env.ts: a malformed value stops
 * the worker or the CLI with one line naming the variable. The worker and the CLI must see the same
 * TARGET_HEALTH_ROUTES (labels are checked when a canary is defined and resolved when it runs) and the
 * same TARGET_HEALTH_CANARY_ALLOWED_TARGETS (checked when defined and again at every fetch).
 */
import { z } from 'zod';
import { ALLOWED_TARGETS_VARIABLE, parseReachPolicy, type ReachPolicy } from '../../core/canaries/reach';
import { parseRouteTable, type RouteTable } from '../../core/canaries/routes';
import { UserError } from '../../core/common/user-error';
import { describeValue, messageLine } from '@target-health/crawler/events/zod-issues';

type Env = Record<string, string | undefined>;

/**
 * Names the product, so a site owner reading logs knows who fetched; set it to the fleet's UA to travel like
 * production.
 */
export const DEFAULT_CANARY_USER_AGENT = 'target-health-canary/0.1 (known-answer page check)';

export const CANARY_SETTING_DEFAULTS = {
  /** Whole fetch: connect, headers and body. A slower answer is an `error` (network error: timeout). */
  timeoutMs: 20_000,
  connectTimeoutMs: 5_000,
  /** Reading stops here: a canary needs a page, not a download (the classifier reads the first 64 KB). */
  maxBodyBytes: 2 * 1024 * 1024,
  /** Canaries of one site fetched at once by one activity call. */
  concurrency: 4,
} as const;

export interface CanarySettings {
  userAgent: string;
  timeoutMs: number;
  connectTimeoutMs: number;
  maxBodyBytes: number;
  concurrency: number;
  routes: RouteTable;
  /** What canaries may reach beyond their own site's public addresses (core/canaries/reach.ts). */
  reach: ReachPolicy;
}

const integer = (min: number, max: number, example: string) =>
  z.coerce
    .number({ message: `must be a whole number like ${example}` })
    .int(`must be a whole number like ${example}`)
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);

const schema = z.object({
  TARGET_HEALTH_CANARY_USER_AGENT: z
    .string()
    .trim()
    .min(1, 'must not be empty when set')
    .max(512, 'must be at most 512 characters')
    .default(DEFAULT_CANARY_USER_AGENT),
  TARGET_HEALTH_CANARY_TIMEOUT_MS: integer(100, 300_000, '20000').default(CANARY_SETTING_DEFAULTS.timeoutMs),
  TARGET_HEALTH_CANARY_CONNECT_TIMEOUT_MS: integer(100, 300_000, '5000').default(
    CANARY_SETTING_DEFAULTS.connectTimeoutMs,
  ),
  TARGET_HEALTH_CANARY_MAX_BYTES: integer(1024, 100 * 1024 * 1024, '2097152').default(
    CANARY_SETTING_DEFAULTS.maxBodyBytes,
  ),
  TARGET_HEALTH_CANARY_CONCURRENCY: integer(1, 64, '4').default(CANARY_SETTING_DEFAULTS.concurrency),
});

/** Reads and validates the canary settings; throws UserError (`VARIABLE: problem (got "value")`). */
export function loadCanarySettings(env: Env = process.env): CanarySettings {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new UserError(
      parsed.error.issues
        .map((issue) => {
          const name = String(issue.path[0] ?? 'environment');
          return `${name}: ${issue.message} (got ${describeValue(env[name] ?? '')})`;
        })
        .join('; '),
    );
  }
  const routes = parseRouteTable(env.TARGET_HEALTH_ROUTES);
  if (!routes.ok) throw new UserError(messageLine(`TARGET_HEALTH_ROUTES: ${routes.problem}`, 1_000));
  const reach = parseReachPolicy(env[ALLOWED_TARGETS_VARIABLE]);
  if (!reach.ok) throw new UserError(messageLine(`${ALLOWED_TARGETS_VARIABLE}: ${reach.problem}`, 1_000));
  const e = parsed.data;
  return {
    userAgent: e.TARGET_HEALTH_CANARY_USER_AGENT,
    timeoutMs: e.TARGET_HEALTH_CANARY_TIMEOUT_MS,
    connectTimeoutMs: e.TARGET_HEALTH_CANARY_CONNECT_TIMEOUT_MS,
    maxBodyBytes: e.TARGET_HEALTH_CANARY_MAX_BYTES,
    concurrency: e.TARGET_HEALTH_CANARY_CONCURRENCY,
    routes: routes.table,
    reach: reach.policy,
  };
}
