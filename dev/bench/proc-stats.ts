/** CPU time and memory of processes, from /proc (Linux): what the benchmark reports per process. */
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * utime + stime of one process in ms (0 if it is gone); with `reaped`, plus the CPU of its children that
 * have exited and been waited for (PostgreSQL backends come and go; the postmaster reaps them).
 */
export function cpuMs(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const own = f[11]! + f[12]!;
    return ((own + (reaped ? f[13]! + f[14]! : 0)) / TICKS_PER_SECOND) * 1000;
  } catch {
    return 0;
  }
}

/** Resident memory of one process, in MB. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** A process and all its descendants (PostgreSQL's backends, a CLI's server). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** CPU of a process tree, exited-and-reaped descendants included. */
export function treeCpuMs(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + cpuMs(pid, true), 0);
}

export function treeRssMb(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + rssMb(pid), 0);
}
