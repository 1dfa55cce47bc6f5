/**
 * `target-health ingest <file|->`: load NDJSON request outcomes into the signal store. Reports every
 * rejected line (line number, field, reason) on stderr, stores the valid ones, and ends with a summary.
 * Exit code: 0 all stored, 1 some lines rejected (the valid ones are stored), 2 a usage or settings error
 * (including a wrong password or database name), 3 the database is unreachable, stopped answering
 * (--timeout) or lost a batch partway: the message names the line to send again from (earlier ones are
 * stored; resending stores nothing twice).
 */
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { MultiBar } from 'cli-progress';
import type { Command } from 'commander';
import pg from 'pg';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { availableParallelism } from 'node:os';
import { loadDatabaseUrl, loadMinuteDays } from '../../server/config/env';
import { describeDatabaseUrl, describePgError } from '../../server/db/pool';
import type { CliContext } from '../context';
import { parseDuration } from '../durations';
import { DEFAULT_DB_TIMEOUT_MS, ingestStream, type StreamIngestSummary } from '../../server/ingest/ingest-stream';

const DEFAULT_TIMEOUT = `${DEFAULT_DB_TIMEOUT_MS / 60_000}m`;

interface IngestOptions {
  dryRun?: boolean;
  batchSize: string;
  timeout: string;
  json?: boolean;
  progress: boolean;
}

/** One worker thread per core (at least two, so parsing overlaps with writing; at most four). */
const INGEST_WORKERS = Math.min(4, Math.max(2, availableParallelism()));

/** Files above this size get a progress bar (on a terminal). */
const PROGRESS_MIN_BYTES = 5_000_000;

function openInput(source: string): { stream: Readable; size?: number } {
  if (source === '-') return { stream: process.stdin };
  let size: number;
  try {
    const stat = statSync(source);
    if (!stat.isFile())
      throw new UserError(`file: ${describeValue(source, 200)} is not a file; give an NDJSON file or - for stdin`);
    size = stat.size;
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(
      `file: cannot read ${describeValue(source, 200)} ` +
        `(${(err as NodeJS.ErrnoException).code ?? String(err)}); give an NDJSON file or - for stdin`,
    );
  }
  return { stream: createReadStream(source, { highWaterMark: 1 << 20 }), size };
}

/** Connection failures that a retry will not fix: the settings are wrong (exit 2). */
const SETTINGS_ERRORS = new Set(['28P01', '28000', '3D000', 'ENOTFOUND', 'ERR_INVALID_URL']);

/**
 * Checked here, once, for a clear message before any line is read; the workers connect themselves.
 * Wrong settings exit 2; a database that is down, refusing connections or not answering exits 3,
 * like a batch lost partway: the same file can simply be sent again later.
 */
async function checkDatabase(databaseUrl: string, timeoutMs: number): Promise<void> {
  let where: string;
  try {
    where = describeDatabaseUrl(databaseUrl);
  } catch {
    throw new UserError('DATABASE_URL: is not a URL; use postgres://user:password@host:5432/database');
  }
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 1,
    connectionTimeoutMillis: 10_000,
    query_timeout: timeoutMs + 2_000,
  });
  pool.on('error', () => undefined);
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && SETTINGS_ERRORS.has(code)) {
      throw new UserError(
        `DATABASE_URL: cannot use PostgreSQL at ${where} (${describePgError(err)}); check the URL, user, ` +
          `password and database name`,
      );
    }
    throw new UserError(
      `database: PostgreSQL at ${where} is not answering (${describePgError(err)}); nothing was stored — run ` +
        `the command again when it is back`,
      3,
    );
  } finally {
    await pool.end().catch(() => undefined);
  }
}

function formatSummary(s: StreamIngestSummary, dryRun: boolean): string {
  const rate = s.elapsedMs > 0 ? Math.round((s.accepted / s.elapsedMs) * 1000) : s.accepted;
  const stored = dryRun
    ? `${s.accepted.toLocaleString('en')} valid (dry run: nothing stored)`
    : `${s.accepted.toLocaleString('en')} valid, ${s.inserted.toLocaleString('en')} stored, ` +
      `${s.duplicates.toLocaleString('en')} repeats ignored`;
  return (
    `${s.lines.toLocaleString('en')} lines: ${stored}, ${s.rejected.toLocaleString('en')} ` +
    `rejected${s.blank > 0 ? `, ${s.blank} blank` : ''} — ${(s.elapsedMs / 1000).toFixed(1)} s, ` +
    `${rate.toLocaleString('en')} events/s`
  );
}

export function registerIngestCommand(program: Command, _context: () => CliContext): void {
  program
    .command('ingest')
    .description('load request-outcome events (NDJSON, one JSON object per line) into the signal store')
    .argument('<file>', 'an NDJSON file, or - for stdin')
    .option('--dry-run', 'validate only; needs no database')
    .option('--batch-size <n>', 'events per transaction (batches are also cut at 4 MB)', '10000')
    .option(
      '--timeout <duration>',
      'give up (exit 3) when the database does not answer a batch for this long',
      DEFAULT_TIMEOUT,
    )
    .option('--json', 'print the summary as JSON')
    .option('--no-progress', 'no progress bar')
    .action(async (source: string, options: IngestOptions) => {
      const batchSize = Number(options.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000)
        throw new UserError(
          `--batch-size: ${describeValue(options.batchSize)} must be a whole number from 1 to 100000`,
        );
      const timeoutMs = parseDuration('--timeout', options.timeout);
      const input = openInput(source);
      const databaseUrl = options.dryRun ? null : loadDatabaseUrl();
      const minuteDays = loadMinuteDays();
      if (databaseUrl !== null) await checkDatabase(databaseUrl, timeoutMs);

      const showBar =
        options.progress &&
        process.stderr.isTTY === true &&
        input.size !== undefined &&
        input.size >= PROGRESS_MIN_BYTES;
      // A MultiBar (of one) because it can print rejected lines above the bar without garbling it.
      const bars = showBar
        ? new MultiBar({
            format: 'ingest [{bar}] {percentage}% | {events} lines | ETA {eta}s',
            stream: process.stderr,
            hideCursor: true,
          })
        : undefined;
      const bar = bars?.create(input.size ?? 0, 0, { events: 0 });

      const summary = await ingestStream(input.stream, {
        databaseUrl,
        batchSize,
        timeoutMs,
        workers: INGEST_WORKERS,
        minuteDays,
        onRejected: (r) => {
          const text = r.errors.map((e) => `line ${r.line}: ${e.replace(/^line \d+: /, '')}`).join('\n');
          if (bars) bars.log(`${text}\n`);
          else process.stderr.write(`${text}\n`);
        },
        onProgress: (bytes, lines) => bar?.update(Math.min(bytes, input.size ?? bytes), { events: lines }),
      });
      bars?.stop();
      process.stdout.write(
        options.json
          ? `${JSON.stringify({ ...summary, dryRun: options.dryRun === true })}\n`
          : `${formatSummary(summary, options.dryRun === true)}\n`,
      );
      if (summary.rejected > 0) process.exitCode = 1;
    });
}
