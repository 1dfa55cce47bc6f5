/**
 * The `target-health` command line. Each command lives in client/commands/; this file only assembles
 * them and turns user mistakes into one-line errors with a non-zero exit.
 */
import { Command, CommanderError } from 'commander';
import { CliContext } from './context';

type Register = (program: Command, context: () => CliContext) => void;

/**
 * Every command and where its code lives, loaded on demand: running one command loads only that
 * command's modules (the Temporal client, the store, the canary fetcher...), so the CLI starts in
 * a fraction of the time. Help and unknown commands load them all. Order = order in the help.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- lazy and synchronous on purpose (CommonJS build) */
const COMMANDS: Record<string, () => Register> = {
  start: () => (require('./commands/start') as Record<'registerStartCommand', Register>).registerStartCommand,
  status: () => (require('./commands/status') as Record<'registerStatusCommand', Register>).registerStatusCommand,
  sites: () => (require('./commands/sites') as Record<'registerSitesCommand', Register>).registerSitesCommand,
  history: () => (require('./commands/history') as Record<'registerHistoryCommand', Register>).registerHistoryCommand,
  configure: () =>
    (require('./commands/configure') as Record<'registerConfigureCommand', Register>).registerConfigureCommand,
  explain: () => (require('./commands/explain') as Record<'registerExplainCommand', Register>).registerExplainCommand,
  decide: () => (require('./commands/decide') as Record<'registerDecideCommand', Register>).registerDecideCommand,
  controls: () =>
    (require('./commands/controls') as Record<'registerControlsCommand', Register>).registerControlsCommand,
  ingest: () => (require('./commands/ingest') as Record<'registerIngestCommand', Register>).registerIngestCommand,
  export: () => (require('./commands/export') as Record<'registerExportCommand', Register>).registerExportCommand,
  canary: () => (require('./commands/canary') as Record<'registerCanaryCommand', Register>).registerCanaryCommand,
  retention: () =>
    (require('./commands/retention') as Record<'registerRetentionCommand', Register>).registerRetentionCommand,
  migrate: () => (require('./commands/migrate') as Record<'registerMigrateCommand', Register>).registerMigrateCommand,
  replay: () => (require('./commands/replay') as Record<'registerReplayCommand', Register>).registerReplayCommand,
  chart: () => (require('./commands/chart') as Record<'registerChartCommand', Register>).registerChartCommand,
  review: () => (require('./commands/review') as Record<'registerReviewCommand', Register>).registerReviewCommand,
  tune: () => (require('./commands/tune') as Record<'registerTuneCommand', Register>).registerTuneCommand,
  score: () => (require('./commands/score') as Record<'registerScoreCommand', Register>).registerScoreCommand,
  simulate: () =>
    (require('./commands/simulate') as Record<'registerSimulateCommand', Register>).registerSimulateCommand,
  backtest: () =>
    (require('./commands/backtest') as Record<'registerBacktestCommand', Register>).registerBacktestCommand,
  classify: () =>
    (require('./commands/classify') as Record<'registerClassifyCommand', Register>).registerClassifyCommand,
  markers: () => (require('./commands/markers') as Record<'registerMarkersCommand', Register>).registerMarkersCommand,
  api: () => (require('./commands/api') as Record<'registerApiCommand', Register>).registerApiCommand,
  token: () => (require('./commands/token') as Record<'registerTokenCommand', Register>).registerTokenCommand,
  temporal: () =>
    (require('./commands/temporal') as Record<'registerTemporalCommand', Register>).registerTemporalCommand,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** The sub-command named in argv (process.argv shape), if it is one of ours. */
function requestedCommand(argv: readonly string[]): string | undefined {
  const name = argv.slice(2).find((a) => !a.startsWith('-'));
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? name : undefined;
}

export function buildProgram(context: () => CliContext, argv: readonly string[] = []): Command {
  const program = new Command('target-health')
    .description('Per-site health scores for crawler fleets, and the Temporal control loop that acts on them.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  const only = requestedCommand(argv);
  for (const [name, load] of Object.entries(COMMANDS)) {
    if (only === undefined || only === name) load()(program, context);
  }
  return program;
}

/** Runs the CLI on `argv` (process.argv shape); returns the exit code. */
export async function runCli(argv: string[]): Promise<number | undefined> {
  let ctx: CliContext | undefined;
  const program = buildProgram(() => (ctx ??= new CliContext()), argv);
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
