/**
 * What `npm start` prints once everything runs: where each part is, and the commands that reach it from
 * another terminal. Pure, so the lines are tested without starting a stack.
 */
import { RUNNING_SITES_QUERY } from '../loop/list-queries';
import type { TemporalCli } from './temporal-cli';

export interface BannerInput {
  uiUrl: string | undefined;
  temporalAddress: string;
  shownDatabaseUrl: string;
  externalDatabase: boolean;
  apiUrl: string;
  cliSettings: { shownPath: string; names: string[] };
  /** The Temporal CLI the stack provisioned; undefined when TEMPORAL_ADDRESS names a cluster (none was needed). */
  temporalCli: TemporalCli | undefined;
}

/** Where the Temporal CLI is, and that `npx target-health temporal …` runs it with the stack's settings. */
function temporalCliLine(cli: TemporalCli | undefined): string {
  if (cli === undefined)
    return `npx target-health temporal … (provisioned on first use: temporal on PATH, else the per-machine cache)`;
  if (cli.kind === 'sdk-download')
    return (
      `the dev server came from the SDK download: put temporal on PATH (or TEMPORAL_CLI_PATH) for \`npx ` +
      `target-health temporal …\``
    );
  return `${cli.path} (${cli.source}); or \`npx target-health temporal …\`, connected like every command here`;
}

export function bannerLines(b: BannerInput): string[] {
  const env = `set -a; . ${b.cliSettings.shownPath}; set +a;`;
  return [
    '',
    `  Temporal UI:   ${b.uiUrl ?? '(your cluster)'}`,
    `  Temporal:      TEMPORAL_ADDRESS=${b.temporalAddress}`,
    `  PostgreSQL:    DATABASE_URL=${b.shownDatabaseUrl}${b.externalDatabase ? ' (yours, from the environment)' : ''}`,
    `  CLI settings:  ${b.cliSettings.shownPath} (${b.cliSettings.names.join(', ')}; readable by you only)`,
    `  API:           ${b.apiUrl} (OpenAPI: ${b.apiUrl}/openapi.json)`,
    `  Console:       ${b.apiUrl}/console (sign in with a token of scope read: docs/console.md)`,
    `  Temporal CLI:  ${temporalCliLine(b.temporalCli)}`,
    `  List sites:    ${env} npx target-health temporal workflow list --query "${RUNNING_SITES_QUERY}"`,
    `  Watch a site:  ${env} npx target-health start shop.example.com`,
    `  First token:   ${env} npx target-health token create me --scope admin`,
    '',
  ];
}
