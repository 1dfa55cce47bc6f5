/**
 * `target-health export <site> [--from T] [--to T] [--shift D] [--output FILE]`: a site's stored events
 * as NDJSON in the event schema (docs/events.md) — what `target-health ingest` takes back unchanged
 * (resent as they are, every line is a duplicate). With `--shift -2d` every event moves two days back
 * in time: a calibration crawl becomes a new site's baseline (docs/crawlers-library.md, "A new site's
 * normal"). To a file, the output is written whole or not at all (a temporary file, renamed at the end).
 */
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync, type WriteStream } from 'node:fs';
import { msToNumber } from '@temporalio/common';
import type { Command } from 'commander';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { UserError } from '../../core/common/user-error';
import { EVENT_HORIZON } from '../../core/signals/horizon';
import { exportEvents } from '../../server/db/signal-store/export';
import { parseWhen } from '../on-call/times';
import { siteArgument } from '../site-arg';
import type { CliContext } from '../context';

interface ExportOptions {
  from: string;
  to: string;
  shift?: string;
  output?: string;
}

/** `--shift`: a signed duration (-2d, 36h, -90m). */
export function parseShift(value: string): number {
  const m = /^([+-]?)\s*(\d+(?:\.\d+)?\s*(?:ms|s|m|h|d))$/i.exec(value.trim());
  let ms = Number.NaN;
  if (m) {
    try {
      ms = msToNumber(m[2]!.replace(/\s+/g, '') as Parameters<typeof msToNumber>[0]);
    } catch {
      ms = Number.NaN;
    }
  }
  if (!Number.isFinite(ms))
    throw new UserError(`--shift: ${describeValue(value)} is not a duration; use e.g. -2d (two days back) or 12h`);
  return m![1] === '-' ? -ms : ms;
}

/** Where the lines go: stdout, or a temporary file renamed to the output at the end. */
function openOutput(path: string | undefined): {
  out: NodeJS.WritableStream;
  finish: () => Promise<void>;
  abandon: () => void;
} {
  if (path === undefined) return { out: process.stdout, finish: () => Promise.resolve(), abandon: () => undefined };
  const partial = `${path}.partial-${process.pid}`;
  const file: WriteStream = createWriteStream(partial, { flags: 'wx' });
  return {
    out: file,
    finish: async () => {
      file.end();
      await once(file, 'close');
      renameSync(partial, path);
    },
    abandon: () => {
      file.destroy();
      rmSync(partial, { force: true });
    },
  };
}

export function registerExportCommand(program: Command, context: () => CliContext): void {
  program
    .command('export')
    .description(
      "a site's stored events as NDJSON in the event schema (what ingest takes back), optionally moved in time",
    )
    .argument('<site>', 'the site (host name or URL)')
    .option(
      '--from <time>',
      'start (ISO-8601 with a zone, a UTC date, or a time ago: -6h, 2d); raw events are kept 7 days',
      '-7d',
    )
    .option('--to <time>', 'end, exclusive (same forms; now by default)', 'now')
    .option(
      '--shift <duration>',
      'move every event by this much (-2d: two days back), e.g. to make a calibration crawl a baseline',
    )
    .option('--output <file>', 'write to this file (whole or not at all) instead of stdout')
    .action(async (rawSite: string, options: ExportOptions) => {
      const site = siteArgument(rawSite);
      const now = new Date();
      const from = parseWhen('--from', options.from, now);
      const to = parseWhen('--to', options.to, now);
      if (from.getTime() >= to.getTime())
        throw new UserError(`--from: ${from.toISOString()} is not before --to ${to.toISOString()}`);
      const shiftMs = options.shift === undefined ? 0 : parseShift(options.shift);
      // What ingest would refuse, refused here: the whole range must land inside its time horizon.
      const earliest = now.getTime() - EVENT_HORIZON.maxAgeMs;
      const latest = now.getTime() + EVENT_HORIZON.maxAheadMs;
      if (from.getTime() + shiftMs < earliest || Math.min(to.getTime(), now.getTime()) + shiftMs > latest) {
        const days = Math.round(EVENT_HORIZON.maxAgeMs / 86_400_000);
        throw new UserError(
          `--shift: ${options.shift ?? '0'} moves events of ${from.toISOString()} … ${to.toISOString()} ` +
            `outside what ingest takes (the last ${days} days up to a few minutes ahead); narrow --from/--to or ` +
            `shift less`,
        );
      }
      const pool = await context().db();
      const { out, finish, abandon } = openOutput(options.output);
      let count = 0;
      try {
        for await (const page of exportEvents(pool, site, from, to, shiftMs)) {
          let chunk = '';
          for (const event of page) chunk += `${JSON.stringify(event)}\n`;
          count += page.length;
          if (!out.write(chunk)) await once(out, 'drain');
        }
        await finish();
      } catch (err) {
        abandon();
        throw err;
      }
      process.stderr.write(
        `exported ${count.toLocaleString('en')} events of ${site} (${from.toISOString()} … ` +
          `${to.toISOString()})${shiftMs === 0 ? '' : `, moved by ${options.shift}`}` +
          `${options.output === undefined ? '' : ` to ${options.output}`}\n`,
      );
    });
}
