/**
 * Retention by dropping whole partitions: raw events and minute rollups are kept briefly, hour and day
 * rollups long (the score's history over months is the record of each site's attitude).
 */
import { z } from 'zod';
import type { Pool } from '../pool';
import { dropPartitionsBefore, type PartitionedTable } from './partitions';

export const retentionPolicySchema = z.object({
  rawDays: z.number().int().min(1, 'rawDays: keep raw events at least 1 day').default(7),
  minuteDays: z
    .number()
    .int()
    .min(2, 'minuteDays: the current window needs at least 2 days of minute rollups')
    .default(3),
  hourDays: z
    .number()
    .int()
    .min(16, 'hourDays: the 14-day baseline needs at least 16 days of hour rollups')
    .default(90),
  dayDays: z.number().int().min(16, 'dayDays: the 14-day baseline needs at least 16 days of day rollups').default(800),
  normDays: z.number().int().min(15, 'normDays: norms are read over 14 days').default(60),
});
export type RetentionPolicy = z.output<typeof retentionPolicySchema>;

export async function applyRetention(
  pool: Pool,
  policy: RetentionPolicy,
  now: Date,
  dryRun = false,
): Promise<Record<PartitionedTable, string[]>> {
  const cutoff = (days: number) => new Date(now.getTime() - days * 86_400_000);
  return {
    request_events: await dropPartitionsBefore(pool, 'request_events', cutoff(policy.rawDays), dryRun),
    rollup_minute: await dropPartitionsBefore(pool, 'rollup_minute', cutoff(policy.minuteDays), dryRun),
    rollup_hour: await dropPartitionsBefore(pool, 'rollup_hour', cutoff(policy.hourDays), dryRun),
    rollup_day: await dropPartitionsBefore(pool, 'rollup_day', cutoff(policy.dayDays), dryRun),
    page_norms_day: await dropPartitionsBefore(pool, 'page_norms_day', cutoff(policy.normDays), dryRun),
  };
}
