/**
 * A long-running program of the cluster stack (the Temporal server, the UI server, a worker): output to
 * a log file, its own process group (a terminal's Ctrl-C reaches only the stack, which stops its parts in
 * order), taken down if this process exits without stopping it, and stopped with SIGTERM then, after a
 * grace period, SIGKILL.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../../core/common/user-error';

export interface ChildHandle {
  name: string;
  pid: number | undefined;
  logFile: string;
  /** null while running. */
  exitCode(): number | null;
  /** Resolves with how it ended (exit code or signal). */
  exited: Promise<string>;
  kill(signal: NodeJS.Signals): void;
  stop(graceMs?: number): Promise<void>;
}

export function startChild(
  name: string,
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; logFile: string; cwd?: string },
): ChildHandle {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(command, [...args], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  // Both streams into one log: neither may end it (the other could still write); 'close' — the process
  // gone and both streams drained — ends it.
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  let ended: string | null = null;
  const exited = new Promise<string>((resolve) =>
    child.once('close', (code, signal) => {
      ended = signal ?? `exit code ${code}`;
      log.end(() => resolve(ended!));
    }),
  );
  const killOnExit = (): void => {
    if (ended === null) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  return {
    name,
    pid: child.pid,
    logFile: options.logFile,
    exitCode: () => (ended === null ? null : (child.exitCode ?? 128)),
    exited,
    kill: (signal) => {
      if (ended === null) child.kill(signal);
    },
    stop: async (graceMs = 15_000) => {
      process.removeListener('exit', killOnExit);
      if (ended === null) {
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(force);
      }
      await exited;
    },
  };
}

/** Resolves once the child's log holds a line matching `pattern` (e.g. a worker's "worker polling"). */
export async function waitForLogLine(
  child: ChildHandle,
  pattern: RegExp,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(child.logFile) && pattern.test(readFileSync(child.logFile, 'utf8'))) return;
    if (child.exitCode() !== null)
      throw new UserError(`${child.name} exited (${await child.exited}) before ${what}; see ${child.logFile}`);
    if (Date.now() > deadline)
      throw new UserError(
        `${child.name}: no sign of ${what} within ${Math.round(timeoutMs / 1000)} s; see ${child.logFile}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}
