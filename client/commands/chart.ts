/**
 * `target-health chart <site> --from T --to T --out file.svg|file.png`: decisions, alerts and control changes
 * as labelled marks, the site's score and smoothed score over the band per period, its requests and errors per
 * minute, its refusal rates and p95 latency against their normal — one image, from the store's rollups and the
 * assessments, all times in UTC. docs/charts.md.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { plural } from '../../core/common/plural';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { describeBucket } from '../../tools/charts/resolution';
import { readChartData } from '../../tools/charts/read-history';
import { renderSvg, svgToPng } from '../../tools/charts/render';
import { buildChartSpec } from '../../tools/charts/spec';
import type { ChartMark } from '../../tools/charts/types';
import { writeFileAtomically } from '../../tools/charts/write-atomically';
import type { CliContext } from '../context';
import { siteArgument } from '../site-arg';
import { parseWhen } from '../on-call/times';
import { replayConfig, requireKnownSite } from './replay';
import { parseDuration } from '../durations';
import { openRecord, storedTicksIn, storedTraffic } from '../loop-record/open';
import { chartLoopOf } from '../loop-record/record';
import { sourceLine } from '../loop-record/source';
import { runningSettingsOf } from '../running-settings';

const DEFAULT_FROM = '-24h';
const DEFAULT_TO = 'now';

interface ChartOptions {
  from?: string;
  to?: string;
  out?: string;
  config?: string;
  tick?: string;
}

/** Day rollups are kept 800 days (docs/signal-store.md, Retention): nothing older can be charted. */
export const MAX_RANGE_DAYS = 800;
const DAY = 86_400_000;

/** The output's format from its extension, and a check that it can be written — before anything is read. */
export async function checkOutput(out: string | undefined): Promise<{ path: string; format: 'svg' | 'png' }> {
  if (out === undefined || out === '')
    throw new UserError('--out: required, the file to write, ending in .svg or .png (e.g. --out shop.svg)');
  const ext = extname(out).toLowerCase();
  if (ext !== '.svg' && ext !== '.png')
    throw new UserError(`--out: ${describeValue(out, 200)} must end in .svg or .png`);
  const path = resolve(out);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory())
    throw new UserError(
      `--out: ${describeValue(out, 200)} is a folder; name a file in it, e.g. ${out.replace(/\/+$/, '')}/chart${ext}`,
    );
  try {
    await access(dirname(path), constants.W_OK);
  } catch (err) {
    throw new UserError(
      `--out: cannot write into ${describeValue(dirname(path), 200)} ` +
        `(${(err as NodeJS.ErrnoException).code ?? String(err)}); choose an existing folder you can write to`,
    );
  }
  return { path, format: ext === '.svg' ? 'svg' : 'png' };
}

/** The period, in the forms `history` takes (client/on-call/times.ts): ISO with a zone, a UTC date, now, -6h. */
export function checkRange(options: ChartOptions, now: Date = new Date()): { from: number; to: number } {
  const from = parseWhen('--from', options.from ?? DEFAULT_FROM, now).getTime();
  const to = parseWhen('--to', options.to ?? DEFAULT_TO, now).getTime();
  if (to <= from) throw new UserError(`--to: ${options.to} must be after --from ${options.from}`);
  if (to - from > MAX_RANGE_DAYS * DAY)
    throw new UserError(
      `--from/--to: ${Math.ceil((to - from) / DAY)} days; chart at most ${MAX_RANGE_DAYS} days (the day ` +
        `rollups' retention)`,
    );
  return { from, to };
}

/** The stored events drawn as points: every decision, notification and control change (a run has several). */
export function markedEvents(marks: readonly ChartMark[]): number {
  return marks.reduce((n, m) => n + m.events.length, 0);
}

export function registerChartCommand(program: Command, context: () => CliContext): void {
  program
    .command('chart')
    .description(
      "chart a site's labelled decisions, alerts and control changes, score, requests and errors, and signals " +
        'against their normal over a period (SVG or PNG, times in UTC)',
    )
    .argument('<site>', 'the site (host name or URL)')
    .option('--from <time>', 'start (ISO-8601 with a zone, a UTC date, or a time ago: -6h, 2d)', DEFAULT_FROM)
    .option('--to <time>', 'end, exclusive (same forms; now by default)', DEFAULT_TO)
    .option('--out <file>', 'the image to write: file.svg or file.png (written whole or not at all)')
    .option(
      '--config <file>',
      'chart what a replay with these settings (as for `start --config`) would have done, instead of the stored ticks',
    )
    .option(
      '--tick <duration>',
      "a replay's tick (with --config, or where no live loop ticked; default: the settings')",
    )
    .action(async (rawSite: string, options: ChartOptions) => {
      const site = siteArgument(rawSite);
      const now = Date.now();
      const { from, to } = checkRange(options);
      const tickMs = options.tick === undefined ? null : parseDuration('--tick', options.tick);
      if (options.config !== undefined) replayConfig(site, '60s', options.config);
      const out = await checkOutput(options.out);
      const ctx = context();
      const pool = await ctx.db();
      await requireKnownSite(pool, site);
      const period = { from: new Date(from), to: new Date(to) };
      const storedTicks = await storedTicksIn(pool, site, period.from, period.to);
      const replay =
        options.config !== undefined || (!storedTicks && (await storedTraffic(pool, site, period.from, period.to)));
      const opened = replay
        ? await openRecord(pool, {
            site,
            period,
            settingsAt: period.from,
            ...(options.config === undefined ? {} : { configFile: options.config }),
            tickMs,
            storedTicks: false,
            running: () => runningSettingsOf(ctx, site),
            now,
          })
        : null;
      const read = await readChartData(
        pool,
        site,
        from,
        to,
        opened?.config?.scoring.smoothing.halfLifeMs,
        opened === null ? null : chartLoopOf(opened.record, from, to),
      );
      if (read.ticks === 0 && read.requests === 0) {
        throw new UserError(
          `--from/--to: ${site} has no assessments and no traffic in [${new Date(from).toISOString()}, ` +
            `${new Date(to).toISOString()}); choose a period it was watched in`,
        );
      }
      const svg = await renderSvg(buildChartSpec(read.data));
      await writeFileAtomically(out.path, out.format === 'svg' ? svg : await svgToPng(svg));
      const { resolution } = read.data;
      process.stdout.write(
        `wrote ${options.out}: ${site}, ${plural(read.ticks, 'assessment')} and ${plural(read.requests, 'request')} ` +
          `in ${describeBucket(resolution.bucketMs)} buckets (${resolution.level} rollups), ` +
          `${plural(markedEvents(read.data.marks), 'mark')}` +
          `${opened === null ? '' : `\n${sourceLine(opened.record.source) ?? ''}`}\n`,
      );
    });
}
