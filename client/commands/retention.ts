/** `target-health retention`: drop signal-store partitions older than the retention policy. */
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { loadMinuteDays } from '../../server/config/env';
import { applyRetention, retentionPolicySchema } from '../../server/db/signal-store/retention';
import type { CliContext } from '../context';

interface RetentionOptions {
  dryRun?: boolean;
  rawDays?: string;
  minuteDays?: string;
  hourDays?: string;
  dayDays?: string;
  normDays?: string;
}

const FLAGS = {
  rawDays: '--raw-days',
  minuteDays: '--minute-days',
  hourDays: '--hour-days',
  dayDays: '--day-days',
  normDays: '--norm-days',
} as const;

export function registerRetentionCommand(program: Command, context: () => CliContext): void {
  program
    .command('retention')
    .description('drop raw-event and rollup partitions older than the retention policy (run daily)')
    .option('--dry-run', 'list what would be dropped')
    .option('--raw-days <n>', 'raw events kept (default 7)')
    .option('--minute-days <n>', 'minute rollups kept (default: TARGET_HEALTH_MINUTE_DAYS, else 3)')
    .option('--hour-days <n>', 'hour rollups kept (default 90)')
    .option('--day-days <n>', 'day rollups kept (default 800)')
    .option('--norm-days <n>', 'page norms kept (default 60)')
    .action(async (options: RetentionOptions) => {
      // The deployment's minute retention, which ingest follows too, unless the flag says otherwise.
      const input: Record<string, number> = { minuteDays: loadMinuteDays() };
      for (const [field, flag] of Object.entries(FLAGS) as Array<[keyof typeof FLAGS, string]>) {
        const raw = options[field];
        if (raw === undefined) continue;
        if (!/^\d+$/.test(raw)) throw new UserError(`${flag}: ${describeValue(raw)} must be a whole number of days`);
        input[field] = Number(raw);
      }
      const parsed = retentionPolicySchema.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = String(issue.path[0]) as keyof typeof FLAGS;
        throw new UserError(`${FLAGS[field] ?? field}: ${issue.message.replace(/^\w+: /, '')}`);
      }
      const dropped = await applyRetention(await context().db(), parsed.data, new Date(), options.dryRun === true);
      const all = Object.values(dropped).flat();
      const verb = options.dryRun ? 'would drop' : 'dropped';
      process.stdout.write(
        all.length === 0
          ? 'nothing to drop\n'
          : `${verb} ${all.length} partitions:\n${all.map((n) => `  ${n}`).join('\n')}\n`,
      );
    });
}
