/**
 * The stack's long-running children (the embedded PostgreSQL, the Temporal dev server) must not outlive
 * it: after a `kill -9` of `npm start`, an orphaned postmaster kept the port and the data folder, and the
 * next start refused to run. They get Linux's parent-death signal (prctl PR_SET_PDEATHSIG), set by
 * util-linux's `setpriv` just before it execs the server: when the stack's process dies, however it dies,
 * the kernel itself sends the child its clean-stop signal (PostgreSQL: SIGINT, a fast shutdown).
 *
 * Chosen over a watchdog process (one more process per child, itself killable, and signalling a pid it
 * does not own) and over a pipe whose EOF the child watches (neither PostgreSQL nor the Temporal CLI reads
 * its stdin, so that again needs a helper in between). The signal goes when the thread that spawned the
 * child exits: Node spawns from its main thread, so that is the process's death. Where `setpriv` is
 * missing (macOS), the command runs as is; the next start then finds the leftover through its pid file and
 * stops it (stack/leftover-process.ts), which it also does when it comes before the orphan has finished.
 */
import { execFileSync } from 'node:child_process';

let supported: boolean | undefined;

/** True when `setpriv --pdeathsig` works here (Linux, util-linux ≥ 2.33). Probed once per process. */
export function parentDeathSignalSupported(): boolean {
  if (supported === undefined) {
    try {
      execFileSync('setpriv', ['--pdeathsig', 'SIGTERM', '--', 'true'], { stdio: 'ignore', timeout: 5_000 });
      supported = process.platform === 'linux';
    } catch {
      supported = false;
    }
  }
  return supported;
}

/** `command args…` so that the process gets `signal` when this process dies (same pid: setpriv execs it). */
export function withParentDeathSignal(
  command: string,
  args: readonly string[],
  signal: NodeJS.Signals,
): { command: string; args: string[] } {
  if (!parentDeathSignalSupported()) return { command, args: [...args] };
  return { command: 'setpriv', args: ['--pdeathsig', signal, '--', command, ...args] };
}
