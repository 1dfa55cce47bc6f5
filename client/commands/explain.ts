/**
 * `target-health explain <site> [--at T]`: the score at a past tick, signal by signal — each signal's
 * value, the site's normal and their intervals, the points it cost and whether it is a reason, its stored
 * smoothed score and scored band, the band and controls in effect then — from the stored assessment of the
 * latest tick at or before T (docs/on-call.md). Reads PostgreSQL only: it works for a stopped loop too.
 */
import type { Command } from 'commander';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { assessmentAtOrBefore, controlsAt } from '../../server/db/assessment-at';
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
    .option('--json', 'print the explanation as JSON')
    .action(async (rawSite: string, options: { at: string; json?: boolean }) => {
      const site = siteArgument(rawSite);
      const at = parseWhen('--at', options.at, new Date());
      const pool = await context().db();
      const span = await siteSpan(pool, site);
      if (!span.known)
        throw new UserError(
          `site: ${site} is unknown here (no assessments, controls or registration); list the sites with ` +
            `\`target-health sites\``,
        );
      if (span.first === null || span.last === null)
        throw new UserError(
          `site: ${site} has no ticks stored yet; start its loop with \`target-health start ${site}\``,
        );
      const row = await assessmentAtOrBefore(pool, site, at);
      if (row === undefined) {
        throw new UserError(
          `--at: no tick of ${site} at or before ${describeValue(options.at)} (${at.toISOString()}); its ticks ` +
            `run from ${span.first.toISOString()} to ${span.last.toISOString()}`,
        );
      }
      const read = readStoredTick(row.result);
      // Not the user's mistake: a stored row this version cannot read. Still one line, naming the row.
      if (!read.ok)
        throw new UserError(
          `tick ${row.tick} of ${site} (${row.assessmentKey}): its stored assessment cannot be explained ` +
            `(${read.problem})`,
          1,
        );
      const controls = await controlsAt(pool, site, new Date(row.assessedAt));
      const explained: Explained = {
        site,
        at: at.toISOString(),
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
