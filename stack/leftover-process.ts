/**
 * A server an earlier start left running (that start was killed with SIGKILL, or its machine's OOM
 * killer took it) still holds its data folder and port: the next start finds it through its pid file,
 * makes sure the pid is still that server (not a program that got the number since), and stops it the
 * way the server stops cleanly. Used for the embedded PostgreSQL (its postmaster.pid) and the Temporal
 * dev server (the pid file the stack writes for it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** The process's command line, or undefined when there is no such (live) process or it cannot be read. */
export function processCommandLine(pid: number): string | undefined {
  if (existsSync('/proc/self/cmdline')) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // A zombie has exited: only its parent's wait() is missing.
      if (/\) Z /.test(stat)) return undefined;
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      return undefined;
    }
  }
  try {
    return (
      execFileSync('ps', ['-o', 'command=', '-p', String(pid)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return processCommandLine(pid) !== undefined || !existsSync('/proc/self/cmdline');
}

/** Resolves true once `pid` has gone, false if it is still there after `timeoutMs`. */
export async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * Sends `signal` to the leftover and waits for it to go; after `graceMs`, `force` (and another
 * `graceMs`). Returns false when it is still there after both.
 */
export async function stopLeftover(
  pid: number,
  signal: NodeJS.Signals,
  force: NodeJS.Signals,
  graceMs: number,
): Promise<boolean> {
  for (const s of [signal, force]) {
    try {
      process.kill(pid, s);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
      throw err;
    }
    if (await waitUntilGone(pid, graceMs)) return true;
  }
  return false;
}
