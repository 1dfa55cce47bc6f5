/**
 * `target-health temporal …`: the Temporal CLI this project provisions (stack/temporal-cli.ts — `temporal`
 * on PATH first, then the per-machine cache, built with Go on first use), run with the arguments exactly
 * as given, its output straight to the terminal and its exit code passed back.
 *
 * The connection comes from the same settings as every other command (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, the TLS variables — `data/cli.env` after `npm start`), handed over as the
 * environment variables the Temporal CLI reads, not as flags: flags the user types still win (the CLI
 * ranks flags above its environment), and commands without a connection (`temporal --version`,
 * `temporal server start-dev`) are not handed flags they refuse.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { UserError } from '../core/common/user-error';
import { temporalCliEnv } from '../server/config/env';
import { ensureTemporalCli, temporalCacheDir } from '../stack/temporal-cli';

type Env = NodeJS.ProcessEnv;

/** The exit code a shell reports for a child killed by `signal`. */
function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** The provisioned binary; progress of a first-time build goes to stderr (stdout is the CLI's output). */
export async function provisionedTemporalBinary(env: Env = process.env): Promise<string> {
  const log = { info: (m: string) => process.stderr.write(`target-health: ${m}\n`), warn: () => undefined };
  const cli = await ensureTemporalCli(log, env);
  if (cli.kind !== 'binary') {
    throw new UserError(
      `temporal: no Temporal CLI on PATH or in ${temporalCacheDir(env)}, and no Go to build one; install the ` +
        `Temporal CLI (https://docs.temporal.io/cli/setup-cli) and put it on PATH, or set TEMPORAL_CLI_PATH to it`,
    );
  }
  return cli.path;
}

/** Runs the provisioned `temporal` with `args`; resolves with its exit code (128 + n when killed by signal n). */
export async function runTemporalCli(args: readonly string[], env: Env = process.env): Promise<number> {
  const childEnv = temporalCliEnv(env);
  const binary = await provisionedTemporalBinary(env);
  const child = spawn(binary, [...args], { env: childEnv, stdio: 'inherit' });
  // Ctrl-C reaches the whole foreground group, the CLI included: it decides how to stop, and we wait to
  // pass its exit code back. A SIGTERM sent to us alone is passed on.
  const ignore = (): void => undefined;
  const forward = (): void => void child.kill('SIGTERM');
  process.on('SIGINT', ignore);
  process.on('SIGTERM', forward);
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once('error', (err) => reject(new UserError(`temporal: cannot run ${binary} (${err.message})`)));
      child.once('exit', (code, signal) => resolve(code ?? (signal ? signalExitCode(signal) : 1)));
    });
  } finally {
    process.removeListener('SIGINT', ignore);
    process.removeListener('SIGTERM', forward);
  }
}
