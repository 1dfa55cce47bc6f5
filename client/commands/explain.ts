/**
 * `target-health explain <site> [--at T]`: the score at a past tick, signal by signal — each signal's
 * value, the site's normal and their intervals, the points it cost and whether it is a reason, its stored
 * smoothed score and scored band, the band and controls in effect then — from the stored assessment of the
 * latest tick at or before T (docs/on-call.md). Reads PostgreSQL only: it works for a stopped loop too.
 */
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { assessmentAtOrBefore } from '../../server/db/assessment-at';
import { openRecord, reachOf, storedTraffic, TRAFFIC_LOOKBACK_MS } from '../loop-record/open';
import { runningSettingsOf } from '../running-settings';
import { parseDuration } from '../durations';
import { replayConfig } from './replay';
import { siteSpan } from '../../server/db/history';
import { bandCause } from '../../core/control/band-wording';
import { explainTick } from '../on-call/explain';
import { type Explained, formatExplained } from '../on-call/explain-at';
import { readStoredTick } from '../on-call/stored-tick';
import { parseWhen } from '../on-call/times';
import { siteArgument } from '../site-arg';
import type { CliContext } from '../context';

export function registerExplainCommand(program: Command, context: () => CliContext): void {
  program
    .command('explain')
    .description(
      'the score at a past tick, signal by signal: value vs normal with intervals, penalties, reasons, the ' +
        'smoothed score and band, and the controls then',
    )
    .argument('<site>', 'the site (host name or URL)')
    .option(
      '--at <time>',
      'the latest tick at or before this time (ISO-8601 with a zone, a UTC date, now, or a time ago: -6h, 2d)',
      'now',
    )
    .option(
      '--config <file>',
      'explain the tick a replay with these settings (as for `start --config`) would have made then',
    )
    .option('--tick <duration>', "a replay's tick (with --config, or where no live loop ticked then)")
    .option('--json', 'print the explanation as JSON')
    .action(async (rawSite: string, options: { at: string; config?: string; tick?: string; json?: boolean }) => {
      const site = siteArgument(rawSite);
      const now = new Date();
      const at = parseWhen('--at', options.at, now);
      const tickMs = options.tick === undefined ? null : parseDuration('--tick', options.tick);
      if (options.config !== undefined) replayConfig(site, '60s', options.config);
      const ctx = context();
      const pool = await ctx.db();
      const span = await siteSpan(pool, site);
      const stored = await assessmentAtOrBefore(pool, site, at);
      // A live tick explains `--at` when it is the loop's tick then: not one from before a gap the loop did not
      // tick over (a back-fill, logs from before the product ran), where a replay stands in when there is traffic.
      const current =
        stored !== undefined && at.getTime() - Date.parse(stored.assessedAt) <= (await reachOf(pool, site, stored));
      // Asked only when it decides something: no --config and no live tick then.
      const traffic =
        options.config !== undefined ||
        current ||
        (await storedTraffic(pool, site, new Date(at.getTime() - TRAFFIC_LOOKBACK_MS), new Date(at.getTime() + 1)));
      const useStored = options.config === undefined && stored !== undefined && (current || !traffic);
      if (!useStored && options.config === undefined && !traffic) {
        if (!span.known)
          throw new UserError(
            `site: ${site} is unknown here (no assessments, controls or registration); list the sites with ` +
              `\`target-health sites\``,
          );
        if (span.first === null)
          throw new UserError(
            `site: ${site} has no ticks stored yet; start its loop with \`target-health start ${site}\``,
          );
        throw new UserError(
          `--at: no tick of ${site} at or before ${describeValue(options.at)} (${at.toISOString()}) and no ` +
            `stored traffic before it to replay one from` +
            (span.first === null || span.last === null
              ? ''
              : `; its ticks run from ${span.first.toISOString()} to ${span.last.toISOString()}`),
        );
      }
      const { record } = await openRecord(pool, {
        site,
        period: { from: at, to: new Date(at.getTime() + 1) },
        settingsAt: at,
        ...(options.config === undefined ? {} : { configFile: options.config }),
        tickMs,
        storedTicks: useStored,
        running: () => runningSettingsOf(ctx, site),
        now: now.getTime(),
      });
      const row = useStored ? stored : await record.tickAtOrBefore(at);
      if (row === undefined)
        throw new UserError(
          `--at: the replay made no tick at or before ${at.toISOString()}; give a later --at or a shorter --tick`,
        );
      const read = readStoredTick(row.result);
      // Not the user's mistake: a stored row this version cannot read. Still one line, naming the row.
      if (!read.ok)
        throw new UserError(
          `tick ${row.tick} of ${site} (${row.assessmentKey}): its stored assessment cannot be explained ` +
            `(${read.problem})`,
          1,
        );
      const controls = await record.controlsAt(new Date(row.assessedAt));
      const explained: Explained = {
        site,
        at: at.toISOString(),
        source: record.source,
        tick: { tick: row.tick, assessedAt: row.assessedAt, assessmentKey: row.assessmentKey, chainId: row.chainId },
        band: controls?.controls.band ?? null,
        controls: controls?.controls ?? null,
        controlsChange:
          controls === undefined
            ? null
            : {
                at: controls.at.toISOString(),
                actor: controls.actor,
                reason: controls.reason,
                tick:
                  controls.madeBy === null
                    ? null
                    : { tick: controls.madeBy.tick, assessmentKey: controls.madeBy.assessmentKey },
              },
        // The band's cause is in the reasons of the tick that set it, not necessarily this one.
        bandCause:
          controls === undefined
            ? { kind: 'none' }
            : controls.madeBy === null
              ? { kind: 'person' }
              : bandCause(controls.controls.band, controls.madeBy.reasons),
        scoring:
          read.tick.scoring === undefined
            ? null
            : { smoothedScore: read.tick.scoring.smoothedScore, scoredBand: read.tick.scoring.scoredBand },
        explanation: explainTick(read.tick),
      };
      process.stdout.write(options.json ? `${JSON.stringify(explained)}\n` : formatExplained(explained));
    });
}
