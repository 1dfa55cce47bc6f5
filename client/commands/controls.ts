/** `target-health controls <site>`: what the crawler obeys for a site, and the recent audit trail. */
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { controlAudit, readControls } from '../../server/db/controls';
import type { CliContext } from '../context';
import { siteArgument } from '../site-arg';

export function registerControlsCommand(program: Command, context: () => CliContext): void {
  program
    .command('controls')
    .description("show a site's controls record (site_controls) and its latest changes")
    .argument('<site>', 'the site (host name or URL)')
    .option('--changes <n>', 'how many audit rows to show', '10')
    .option('--json', 'print the record and the changes as JSON')
    .action(async (rawSite: string, options: { changes: string; json?: boolean }) => {
      const site = siteArgument(rawSite);
      const n = Number(options.changes);
      if (!Number.isInteger(n) || n < 0)
        throw new UserError(`--changes: ${describeValue(options.changes)} must be a whole number ≥ 0`);
      const pool = await context().db();
      const record = await readControls(pool, site);
      if (!record)
        throw new UserError(
          `site: no controls recorded for ${site}; its loop writes them on its first tick (\`target-health ` +
            `start ${site}\`)`,
        );
      const changes = n === 0 ? [] : await controlAudit(pool, site, n);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ controls: record, changes })}\n`);
        return;
      }
      const lines = [
        `site           ${site}`,
        `band           ${record.band}`,
        `paused         ${record.paused ? (record.canaryOnly ? 'yes (canaries only)' : 'yes') : 'no'}`,
        `concurrency    ${record.concurrencyLimit}`,
        `revisit        ×${record.revisitMultiplier}`,
        `cost           ×${record.effectiveCostMultiplier}`,
        `reason         ${record.reason}`,
        `version        ${record.version} (${record.updatedAt.toISOString()}, by ${record.updatedBy})`,
      ];
      if (changes.length > 0) {
        lines.push('', 'changes (oldest first):');
        for (const c of changes) {
          const from = c.oldControls ? `${c.oldControls.concurrencyLimit}/×${c.oldControls.revisitMultiplier}` : '—';
          lines.push(
            `  ${c.changedAt.toISOString()}  ${c.actor.padEnd(14)} ${from} → ` +
              `${c.newControls.concurrencyLimit}/×${c.newControls.revisitMultiplier}  ${c.newControls.band}: ` +
              `${c.reason}`,
          );
        }
      }
      process.stdout.write(lines.join('\n') + '\n');
    });
}
