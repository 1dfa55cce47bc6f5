/** The API server's settings from the environment (zod, one line naming the variable on error). */
import { z } from 'zod';
import { UserError } from '../../core/common/user-error';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import { DEFAULT_MINUTE_DAYS } from '../config/env';

const int = (what: string, min: number, max: number) =>
  z.coerce
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(min, { error: `must be ${what}` })
    .max(max, { error: `must be ${what}` });

export const apiEnvSchema = z.object({
  TH_API_HOST: z.string().min(1, 'must be a host name or address, e.g. 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  TH_API_PORT: int('a port number (0-65535; 0 picks a free one)', 0, 65_535).default(8787),
  /** Largest request body (bytes, after gzip is undone): 413 beyond it. */
  TH_API_BODY_LIMIT: int('a number of bytes between 1 KiB and 1 GiB', 1_024, 1 << 30).default(32 * 1024 * 1024),
  /** Requests per token (or per address without one) per minute: 429 beyond it. */
  TH_API_RATE_LIMIT: int('a number of requests per minute of at least 1', 1, 10_000_000).default(6_000),
  /** Origins allowed by CORS, comma-separated; empty (the default): CORS off. */
  TH_API_CORS_ORIGINS: z.string().default(''),
  /**
   * The URL people open the console at, behind a TLS proxy (`https://health.example.com`): its origin is the
   * one state-changing requests must come from, and https makes the session cookie Secure. Empty: the
   * request's own scheme and Host.
   */
  TH_CONSOLE_PUBLIC_URL: z
    .union([
      z.literal(''),
      z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://health.example.com' }),
    ])
    .default(''),
  /** Days of minute rollups kept: events older than that get no minute rows (server/config/env.ts loadMinuteDays). */
  TARGET_HEALTH_MINUTE_DAYS: int('a number of days (2-3650)', 2, 3_650).default(DEFAULT_MINUTE_DAYS),
});
export type ApiSettings = z.output<typeof apiEnvSchema>;

export function loadApiSettings(env: Record<string, string | undefined> = process.env): ApiSettings {
  const r = apiEnvSchema.safeParse(env);
  if (!r.success) throw new UserError(`invalid API setting: ${formatIssues(r.error)}`);
  return r.data;
}
