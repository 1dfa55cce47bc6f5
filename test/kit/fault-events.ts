/**
 * Numbered request-outcome events for the fault tests: event k carries k in `bytes`, so what is stored
 * can be checked event by event — also for events sent without `eventId` (their id is derived from their
 * content, which the test does not compute) — and the CLI's `ingest` run as a child the test can feed
 * line by line (stdin) and kill.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Pool } from '../../server/db/pool';
import { Child } from './fault-stack';
import { CLI, ROOT } from './processes';

/** `count` NDJSON lines for `site`; every other event has no `eventId` (the store derives one). */
export function numberedEventLines(site: string, count: number, from = 0): string[] {
  const now = Date.now();
  const lines: string[] = [];
  for (let k = from; k < from + count; k++) {
    lines.push(
      JSON.stringify({
        ...(k % 2 === 0 ? { eventId: `fault-${randomUUID()}` } : {}),
        // Spread over the last hour, whole milliseconds apart.
        ts: new Date(now - 60_000 - (k % 3_000_000)).toISOString(),
        site,
        pageType: 'product',
        status: 200,
        latencyMs: 150 + (k % 97),
        bytes: k,
        extraction: { result: 'ok', validRecords: 1 },
      }),
    );
  }
  return lines;
}

export interface StoredNumbers {
  rows: number;
  /** Distinct numbers stored. */
  distinct: number;
  /** Numbers below `count` not stored. */
  missing: number[];
  /** Numbers stored more than once. */
  doubled: number[];
}

export async function storedNumbers(pool: Pool, site: string, count: number): Promise<StoredNumbers> {
  const { rows } = await pool.query<{ k: string; n: string }>(
    'SELECT bytes AS k, count(*) AS n FROM request_events WHERE site = $1 GROUP BY bytes',
    [site],
  );
  const seen = new Map(rows.map((r) => [Number(r.k), Number(r.n)]));
  const missing: number[] = [];
  for (let k = 0; k < count; k++) if (!seen.has(k)) missing.push(k);
  return {
    rows: rows.reduce((sum, r) => sum + Number(r.n), 0),
    distinct: seen.size,
    missing,
    doubled: [...seen].filter(([, n]) => n > 1).map(([k]) => k),
  };
}

export async function countStored(pool: Pool, site: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM request_events WHERE site = $1', [site]);
  return Number(rows[0]!.n);
}

/** `target-health ingest - …` reading its stdin, which the test writes (and may leave open). */
export class IngestRun extends Child {
  constructor(env: NodeJS.ProcessEnv, args: string[]) {
    super(
      spawn(process.execPath, [CLI, 'ingest', '-', '--no-progress', '--json', ...args], {
        cwd: ROOT,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    // EPIPE once the CLI has exited: its exit code and output say what happened, not the pipe.
    this.proc.stdin!.on('error', () => undefined);
  }

  /**
   * Writes lines the CLI may refuse to take: resolves once they are taken or the CLI has exited (as it
   * should when the database goes away mid-file).
   */
  async offer(lines: readonly string[]): Promise<void> {
    await new Promise<void>((resolve) => {
      this.proc.stdin!.write(lines.map((l) => `${l}\n`).join(''), () => resolve());
      void this.exited.then(() => resolve());
    });
  }

  /** Resolves once the CLI has taken the lines; fails if it exits or stops reading for 2 minutes. */
  async write(lines: readonly string[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const written = new Promise<void>((resolve, reject) =>
      this.proc.stdin!.write(lines.map((l) => `${l}\n`).join(''), (err) => (err ? reject(err) : resolve())),
    );
    const stopped = this.exited.then(({ code, signal }) => {
      throw new Error(`ingest exited (${code ?? signal}) before taking its input:\n${this.output.slice(-2000)}`);
    });
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`ingest took no input for 2 minutes:\n${this.output.slice(-2000)}`)),
        120_000,
      );
    });
    try {
      await Promise.race([written, stopped, stuck]);
    } finally {
      clearTimeout(timer);
      stopped.catch(() => undefined);
    }
  }

  end(): void {
    if (this.alive) this.proc.stdin!.end();
  }

  async finished(timeoutMs: number): Promise<{ code: number | null; stdout: string; output: string }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`ingest did not finish within ${timeoutMs} ms; output:\n${this.output.slice(-2000)}`)),
        timeoutMs,
      );
    });
    try {
      const { code } = await Promise.race([this.exited, timeout]);
      return { code, stdout: this.stdout, output: this.output };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The line to send again from, as an exit-3 message names it ("send the input again from line N"). */
export function resendFrom(output: string): number {
  const m = /send the input again from line (\d+)/.exec(output);
  if (!m) throw new Error(`the ingest output names no line to send again from:\n${output.slice(-2000)}`);
  return Number(m[1]);
}
