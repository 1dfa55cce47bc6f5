/**
 * `target-health temporal …`: the provisioned Temporal CLI with this project's connection settings
 * (client/temporal-passthrough.ts). Everything after `temporal` is its own — `--help` included.
 */
import type { Command } from 'commander';
import { runTemporalCli } from '../temporal-passthrough';

export function registerTemporalCommand(program: Command): void {
  program
    .command('temporal')
    .description(
      'the Temporal CLI npm start provisioned, connected like every command here (e.g. temporal workflow list ' +
        '--query "WorkflowType = \'siteHealth\'")',
    )
    .argument('[args...]', 'passed to temporal as given')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (args: string[]) => {
      process.exitCode = await runTemporalCli(args);
    });
}
