/** `target-health token create|list|revoke`: bearer tokens of the HTTP API (docs/api.md, "Auth"). */
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { formatIssues } from '@target-health/crawler/events/zod-issues';
import {
  SCOPES,
  TokenError,
  createToken,
  listTokens,
  revokeToken,
  scopesSchema,
  tokenNameSchema,
} from '../../server/api/tokens';
import type { CliContext } from '../context';

function parseName(name: string): string {
  const r = tokenNameSchema.safeParse(name);
  if (!r.success) throw new UserError(`name: ${formatIssues(r.error)}`);
  return r.data;
}

export function registerTokenCommand(program: Command, context: () => CliContext): void {
  const token = program.command('token').description('create, list and revoke bearer tokens of the HTTP API');
  token
    .command('create <name>')
    .description('create a token and print it once (only its hash is stored); the name is the actor in the audit trail')
    .requiredOption('--scope <scopes>', `comma-separated scopes: ${SCOPES.join(', ')} (admin implies all)`)
    .action(async (name: string, opts: { scope: string }) => {
      const scopes = scopesSchema.safeParse(
        opts.scope
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      );
      if (!scopes.success) throw new UserError(`--scope: ${formatIssues(scopes.error)}`);
      try {
        const created = await createToken(await context().db(), parseName(name), scopes.data);
        process.stdout.write(`${created.token}\n`);
        process.stderr.write(
          `token "${name}" (${scopes.data.join(', ')}) created: keep it now, it is not shown again\n`,
        );
      } catch (err) {
        if (err instanceof TokenError) throw new UserError(err.message);
        throw err;
      }
    });
  token
    .command('list')
    .description('list tokens: name, prefix, scopes, created, revoked, last used')
    .option('--json', 'one JSON array')
    .action(async (opts: { json?: boolean }) => {
      const rows = await listTokens(await context().db());
      if (opts.json === true) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return;
      }
      for (const r of rows) {
        process.stdout.write(
          `${r.name}\t${r.prefix}…\t${r.scopes.join(',')}\tcreated ` +
            `${r.createdAt.toISOString()}${r.revokedAt ? `\trevoked ${r.revokedAt.toISOString()}` : ''}\n`,
        );
      }
    });
  token
    .command('revoke <name>')
    .description('revoke a token (effective within 5 s on running API servers)')
    .action(async (name: string) => {
      if (!(await revokeToken(await context().db(), parseName(name))))
        throw new UserError(`name: no token named "${name}" (see \`target-health token list\`)`);
      process.stdout.write(`token "${name}" revoked\n`);
    });
}
