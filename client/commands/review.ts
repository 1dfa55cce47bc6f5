/**
 * `target-health review <site> --incident T [--before 6h] [--after 6h] [--out review.md] [--json]`: a
 * post-incident review in Markdown — summary, band changes with reasons and the route and parser alerts
 * beside them, the onset and the first sign, evidence, degrade and pause after it (and the lead before
 * refusals peaked), actions and whether they were obeyed and helped, decisions, the chart (an SVG beside it), and
 * what to tune from replays of the incident under other settings. docs/review.md.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { writeFileAtomically } from '../../tools/charts/write-atomically';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { runningSettingsOf } from '../running-settings';
import type { Pool } from '../../server/db/pool';
import { parseDuration } from '../durations';
import { parseWhen } from '../on-call/times';
import { parseMark } from '../review/mark';
import { incidentAround } from '../review/gather';
import { recordIncidentMark } from '../../server/db/incident-marks';
import { loginName } from './configure';
import { renderReview } from '../review/render';
import { type Review, reviewSchema } from '../review/schema';
import { DEFAULT_QUIET_DAYS, parseQuietDays, QUIET_LOOKBACK_DAYS } from '../review/quiet-days';
import type { Candidate } from '../review/tune-figures';
import {
  DEFAULT_TICK_MS,
  drawReviewChart,
  type GatheredReview,
  gatherReview,
  openReview,
  type ReviewRequest,
  tuneReview,
} from '../review/build';
import { siteArgument } from '../site-arg';
import type { CliContext } from '../context';
import { replayConfig, requireKnownSite } from './replay';

interface ReviewOptions {
  incident?: string;
  before: string;
  after: string;
  out?: string;
  chart: boolean;
  config?: string;
  candidate?: string[];
  tick?: string;
  quietDays: string;
  json?: boolean;
  mark?: string;
  why?: string;
  who?: string;
}

/** The furthest a search reaches either side of T: a replay of longer is minutes of work. */
export const MAX_SEARCH_MS = 3 * 86_400_000;
export const MAX_CANDIDATES = 2;

/** Where the review goes: a file (checked writable before anything is read), or stdout. */
export async function checkReviewOutput(out: string | undefined): Promise<string | null> {
  if (out === undefined) return null;
  if (out === '') throw new UserError('--out: empty; name the Markdown file to write, e.g. --out review.md');
  const path = resolve(out);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory())
    throw new UserError(
      `--out: ${describeValue(out, 200)} is a folder; name a file in it, e.g. ${out.replace(/\/+$/, '')}/review.md`,
    );
  try {
    await access(dirname(path), constants.W_OK);
  } catch (err) {
    throw new UserError(
      `--out: cannot write into ${describeValue(dirname(path), 200)} ` +
        `(${(err as NodeJS.ErrnoException).code ?? String(err)}); choose an existing folder you can write to`,
    );
  }
  return path;
}

function searchSpan(flag: string, value: string): number {
  const ms = parseDuration(flag, value);
  if (ms > MAX_SEARCH_MS)
    throw new UserError(
      `${flag}: ${describeValue(value)} reaches too far; search at most 3d either side of --incident`,
    );
  return ms;
}

/**
 * `review-shop.example.com-20261124T1002Z.svg`: the site and the incident's start, so reviews of two incidents sit side
 * by side.
 */
export function chartFileName(site: string, fromIso: string): string {
  return `review-${site}-${fromIso.slice(0, 16).replace(/[-:]/g, '')}Z.svg`;
}

/** The chart beside the review: an SVG file in `dir`, named after the site and the incident. */
async function writeChart(pool: Pool, g: GatheredReview, dir: string, now: number): Promise<Review['chart']> {
  const drawn = await drawReviewChart(pool, g, now);
  const file = chartFileName(g.facts.review.site, g.facts.review.window.from);
  await writeFileAtomically(join(dir, file), drawn.svg);
  return { file, note: `${file}: ${drawn.covers}` };
}

export function registerReviewCommand(program: Command, context: () => CliContext): void {
  program
    .command('review')
    .description(
      'a post-incident review in Markdown: band changes and alerts, the onset and what came after it, actions ' +
        'and whether they helped, decisions, chart, what to tune',
    )
    .argument('<site>', 'the site (host name or URL)')
    .option('--incident <time>', 'a time in the incident: ISO-8601 with a zone, a UTC date, or a time ago (-3h)')
    .option('--before <duration>', 'how far before --incident to look for its start (at most 3d)', '6h')
    .option('--after <duration>', 'how far after --incident to look for its end (at most 3d)', '6h')
    .option(
      '--out <file>',
      'write the review to this Markdown file (the chart beside it); default: stdout, the chart in the current folder',
    )
    .option('--no-chart', 'do not write the chart (the review says so)')
    .option(
      '--config <file>',
      'review what these settings (as for `start --config`) would have done: the incident replayed with them, and ' +
        'the tuning from them. Default: the live ticks (a replay where the loop did not tick) and the settings in ' +
        'force at --incident (settings_changes, else the running loop, else the product defaults); the review says ' +
        'which',
    )
    .option(
      '--candidate <file>',
      `settings to try instead of the built-in ones (faster smoothing, earlier throttle); at most ${MAX_CANDIDATES}`,
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option(
      '--tick <duration>',
      "the loop's tick for the replays (default: the stored ticks' spacing, or the settings' own when replayed)",
    )
    .option(
      '--quiet-days <n>',
      `how many of the site's quiet days (of the ${QUIET_LOOKBACK_DAYS} before the incident, 0 to ` +
        `${QUIET_LOOKBACK_DAYS}) to replay the settings over for the false alarms they would add, a day of ticks ` +
        'per setting each; 0 skips them, and then no candidate is recommended',
      String(DEFAULT_QUIET_DAYS),
    )
    .option('--json', 'print the review as JSON instead of Markdown')
    .option(
      '--mark <verdict>',
      'instead of a review, mark the incident at --incident `right` or `false-alarm` for `target-health tune` ' +
        '(with --why; stored with who and when)',
    )
    .option('--why <why>', 'with --mark: why, in a sentence (goes into the audit trail)')
    .option('--who <who>', 'with --mark: who marks it; default: your login name')
    .action(async (rawSite: string, options: ReviewOptions) => {
      const site = siteArgument(rawSite);
      const now = Date.now();
      if (options.incident === undefined)
        throw new UserError(
          '--incident: required, a time in the incident (e.g. --incident 2026-11-24T10:00:00Z, or -3h)',
        );
      const t = parseWhen('--incident', options.incident, new Date(now)).getTime();
      if (t > now)
        throw new UserError(
          `--incident: ${describeValue(options.incident)} is in the future; give a time the incident was under way`,
        );
      const beforeMs = searchSpan('--before', options.before);
      const afterMs = searchSpan('--after', options.after);
      const tickFlag = options.tick === undefined ? null : parseDuration('--tick', options.tick);
      const quietDays = parseQuietDays(options.quietDays);
      const mark = options.mark === undefined ? null : parseMark({ ...options, mark: options.mark }, loginName);
      // Settings are checked before anything is read; the tick is set once the stored ticks are known.
      if (options.config !== undefined) replayConfig(site, String(tickFlag ?? DEFAULT_TICK_MS), options.config);
      const files = options.candidate ?? [];
      if (files.length > MAX_CANDIDATES)
        throw new UserError(`--candidate: ${files.length} given; try at most ${MAX_CANDIDATES} at a time`);
      const candidates = files.map((f): Candidate => ({
        name: basename(f),
        description: `settings of ${f}`,
        config: replayConfig(site, String(tickFlag ?? DEFAULT_TICK_MS), f),
      }));
      const outPath = await checkReviewOutput(options.out);

      const ctx = context();
      const pool = await ctx.db();
      await requireKnownSite(pool, site);
      const request: ReviewRequest = {
        site,
        t,
        beforeMs,
        afterMs,
        now,
        tickMs: tickFlag,
        ...(options.config === undefined ? {} : { configFile: options.config }),
        candidates,
        quietDays,
      };
      if (mark !== null) {
        const { record } = await openReview(pool, () => runningSettingsOf(ctx, site), request);
        const { window } = await incidentAround(record, { site, t, beforeMs, afterMs, now });
        const incidentFrom = new Date(Math.min(window.from, t));
        const incidentTo = new Date(Math.max(window.to, t));
        const stored = await recordIncidentMark(pool, {
          site,
          incidentAt: new Date(t),
          incidentFrom,
          incidentTo,
          ...mark,
        });
        process.stdout.write(
          `marked the incident of ${site} from ${incidentFrom.toISOString()} to ${incidentTo.toISOString()} ` +
            `${options.mark} (by ${stored.who} at ${stored.markedAt.toISOString()}): ${stored.why}\n`,
        );
        return;
      }
      const gathered = await gatherReview(pool, () => runningSettingsOf(ctx, site), request);
      const tuning = await tuneReview(pool, gathered, request);
      const chart = options.chart
        ? await writeChart(pool, gathered, outPath === null ? process.cwd() : dirname(outPath), now)
        : { file: null, note: 'Chart not drawn (--no-chart); `target-health chart` draws it.' };
      const review = reviewSchema.parse({ ...gathered.facts.review, chart, tuning });
      const text = options.json ? `${JSON.stringify(review)}\n` : renderReview(review);
      if (outPath === null) process.stdout.write(text);
      else {
        await writeFileAtomically(outPath, text);
        process.stdout.write(
          `wrote ` +
            `${options.out}${chart.file === null ? '' : ` and ${join(dirname(options.out!), chart.file)}`}: ` +
            `${site}, ${review.worstBand} from ${review.window.from} to ${review.window.to}\n`,
        );
      }
    });
}
