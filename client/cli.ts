/**
 * The `target-health` command line. Each command lives in client/commands/; this file only assembles
 * them and turns user mistakes into one-line errors with a non-zero exit.
 */
import { Command, CommanderError } from 'commander';
import { CliContext } from './context';
import { registerMigrateCommand } from './commands/migrate';
import { registerScoreCommand } from './commands/score';
import { registerStartCommand } from './commands/start';
import { registerStatusCommand } from './commands/status';

export function buildProgram(context: () => CliContext): Command {
  const program = new Command('target-health')
    .description('Per-site health scores for crawler fleets, and the Temporal control loop that acts on them.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerStartCommand(program, context);
  registerStatusCommand(program, context);
  registerMigrateCommand(program);
  registerScoreCommand(program);
  return program;
}

/** Runs the CLI on `argv` (process.argv shape); returns the exit code. */
export async function runCli(argv: string[]): Promise<number | undefined> {
  let ctx: CliContext | undefined;
  const program = buildProgram(() => (ctx ??= new CliContext()));
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // Commander has already printed its own one-line message (unknown option, missing argument...).
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  } finally {
    await ctx?.close();
  }
  return undefined;
}
