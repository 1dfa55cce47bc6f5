/**
 * How the recorder tells the crawler's operators what happened to events it could not store at once:
 * log lines (through an injectable pino-compatible logger; by default JSON lines on stderr), rate-limited
 * so an outage of many minutes or a flood of drops writes a few lines, not one per event or per attempt.
 * Counting (stats()) and the crawler's hooks are the recorder's job; this module only words and paces.
 */
import { writeSync } from 'node:fs';

/** Satisfied by a pino logger (and by `console`); fields first, message second. */
export interface RecorderLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** pino's numeric levels, so a log pipeline that already reads pino lines reads these the same way. */
const LEVELS = { info: 30, warn: 40, error: 50 } as const;

/**
 * One JSON object per line on stderr, in pino's line shape (`level`, `time`, `pid`, `name`, the fields,
 * `msg`) — written by the package itself rather than by pino, which would add a dozen packages to every
 * crawler for three log methods. Synchronous: a crawler's stdout may be its data, and a crash must not
 * eat the last lines. A crawler that wants its own logger passes one (a pino logger fits).
 */
export function defaultRecorderLogger(): RecorderLogger {
  const line = (level: keyof typeof LEVELS, fields: Record<string, unknown>, msg: string): void => {
    let text: string;
    try {
      text = JSON.stringify({
        level: LEVELS[level],
        time: Date.now(),
        pid: process.pid,
        name: 'target-health-recorder',
        ...fields,
        msg,
      });
    } catch {
      // A field JSON cannot hold (a cycle, a BigInt): the message still gets out.
      text = JSON.stringify({
        level: LEVELS[level],
        time: Date.now(),
        pid: process.pid,
        name: 'target-health-recorder',
        msg,
      });
    }
    try {
      writeSync(2, `${text}\n`);
    } catch {
      // stderr closed or full (EAGAIN on a non-blocking pipe): a log line is not worth failing a crawl for.
    }
  };
  return {
    info: (fields, msg) => line('info', fields, msg),
    warn: (fields, msg) => line('warn', fields, msg),
    error: (fields, msg) => line('error', fields, msg),
  };
}

/** One line for an error: its code (ECONNREFUSED, 57P01…) and message, no stack. */
export function describeError(err: unknown): string {
  // Duck-typed rather than instanceof: errors from another realm (a vm context, a worker) count too.
  if (typeof err === 'object' && err !== null && typeof (err as Error).message === 'string') {
    const e = err as Error & { code?: unknown; errors?: unknown };
    const nested = Array.isArray(e.errors) ? e.errors.map((x) => describeError(x)).join(', ') : '';
    const message = e.message || nested || e.name || 'error';
    const code = typeof e.code === 'string' ? e.code : undefined;
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}

/** While writes keep failing, a reminder this often. */
const STILL_FAILING_EVERY_MS = 60_000;
/** Drops and rejections are summed and logged at most this often. */
const SUMMARY_EVERY_MS = 10_000;

export interface ReporterContext {
  /** What is waiting, for the log lines (buffered in memory, spilled on disk). */
  backlog(): { buffered: number; spilled: number };
  retryForMs: number;
  spillDir: string | undefined;
}

export interface Reporter {
  writeFailed(err: unknown): void;
  writeSucceeded(): void;
  /** True from a failed write until the next successful one. */
  readonly failing: boolean;
  dropped(count: number, reason: string): void;
  /** `firstEventId`: the id of the first refused event, to find it in the crawler's own logs. */
  rejected(count: number, firstError: string, firstEventId?: string): void;
  failed(count: number, err: unknown, why: string): void;
  spilling(): void;
  spillEmptied(): void;
  leftOnDisk(count: number): void;
  /** Logs what a pending summary holds (on close). */
  flushSummaries(): void;
}

/** Counts that are logged at most every SUMMARY_EVERY_MS: the first at once, the rest summed. */
function summary(log: (count: number, detail: string, sinceMs: number) => void): {
  add(count: number, detail: string): void;
  flush(): void;
} {
  let pending = 0;
  let detail = '';
  let lastLogAt = -Infinity;
  let firstPendingAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === 0) return;
    log(pending, detail, Date.now() - firstPendingAt);
    pending = 0;
    lastLogAt = Date.now();
  };
  return {
    add(count, what) {
      if (pending === 0) firstPendingAt = Date.now();
      pending += count;
      detail = what;
      const wait = lastLogAt + SUMMARY_EVERY_MS - Date.now();
      if (wait <= 0) flush();
      else if (!timer) {
        timer = setTimeout(flush, wait);
        timer.unref();
      }
    },
    flush,
  };
}

export function createReporter(logger: () => RecorderLogger, ctx: ReporterContext): Reporter {
  let failingSince: number | undefined;
  let lastReminderAt = 0;
  let failures = 0;
  let spillingNow = false;
  const minutes = (ms: number) => `${Math.round(ms / 6_000) / 10} min`;
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

  const drops = summary((count, reason, sinceMs) =>
    logger().warn(
      { dropped: count, reason, ...ctx.backlog() },
      `recorder: dropped ${count} events in the last ${seconds(sinceMs)} (${reason}); they are not stored. ` +
        (ctx.spillDir === undefined
          ? 'Honour record() === false / await drain(), raise highWaterMark, or set spillDir'
          : 'Honour record() === false / await drain(), or raise maxSpillBytes'),
    ),
  );
  let firstRejectedId: string | undefined;
  const rejections = summary((count, firstError) => {
    logger().warn(
      { rejected: count, firstError, ...(firstRejectedId === undefined ? {} : { firstEventId: firstRejectedId }) },
      `recorder: the store refused ${count} invalid events (first: ${firstError}); they are not stored: fix ` +
        `the crawler's events (docs/events.md), or pass onRejected to handle them`,
    );
    firstRejectedId = undefined;
  });

  return {
    get failing() {
      return failingSince !== undefined;
    },
    writeFailed(err) {
      failures += 1;
      const now = Date.now();
      if (failingSince === undefined) {
        failingSince = now;
        lastReminderAt = now;
        logger().warn(
          { err: describeError(err), ...ctx.backlog() },
          `recorder: cannot write events (${describeError(err)}); keeping them and retrying each batch for up ` +
            `to ${minutes(ctx.retryForMs)}` +
            (ctx.spillDir === undefined ? '' : `, then on disk in ${ctx.spillDir}`),
        );
      } else if (now - lastReminderAt >= STILL_FAILING_EVERY_MS) {
        lastReminderAt = now;
        logger().warn(
          { err: describeError(err), failingForMs: now - failingSince, failedAttempts: failures, ...ctx.backlog() },
          `recorder: still cannot write events after ${minutes(now - failingSince)} (${describeError(err)}); retrying`,
        );
      }
    },
    writeSucceeded() {
      if (failingSince === undefined) return;
      const forMs = Date.now() - failingSince;
      failingSince = undefined;
      logger().info(
        { failedForMs: forMs, failedAttempts: failures, ...ctx.backlog() },
        `recorder: writes succeed again after ${seconds(forMs)}; sending what was kept`,
      );
      failures = 0;
    },
    dropped(count, reason) {
      drops.add(count, reason);
    },
    rejected(count, firstError, firstEventId) {
      firstRejectedId = firstEventId;
      rejections.add(count, firstError);
    },
    failed(count, err, why) {
      logger().error(
        { failed: count, err: describeError(err), ...ctx.backlog() },
        `recorder: gave up ${count} events: ${why} (${describeError(err)}); they are not stored`,
      );
    },
    spilling() {
      if (spillingNow) return;
      spillingNow = true;
      logger().warn(
        { ...ctx.backlog() },
        `recorder: memory full; keeping further events on disk in ${ctx.spillDir ?? '?'} until the store takes them`,
      );
    },
    spillEmptied() {
      if (!spillingNow) return;
      spillingNow = false;
      logger().info({ ...ctx.backlog() }, 'recorder: every event kept on disk is sent');
    },
    leftOnDisk(count) {
      logger().warn(
        { spilled: count, spillDir: ctx.spillDir },
        `recorder: closed with ${count} events not yet sent, kept on disk in ${ctx.spillDir ?? '?'}; a ` +
          `recorder started with that spillDir sends them`,
      );
    },
    flushSummaries() {
      drops.flush();
      rejections.flush();
    },
  };
}
