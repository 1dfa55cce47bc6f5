/**
 * `target-health status <site>`: the loop's state (its `state` and `history` queries), explained — the
 * latest tick signal by signal against the site's normal (its stored assessment), routes, canaries, the
 * score's trend over a day, and what the loop will do next and why, with the commands to run
 * (docs/on-call.md).
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Command } from 'commander';
import { workflowIdForSite } from '../../core/common/names';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { workflowUiLink } from '../../server/config/env';
import { type SiteHealthState, type TickSummary, historyQuery, stateQuery } from '../../loop/messages';
import { assessmentAtOrBefore } from '../../server/db/assessment-at';
import { findAssessment } from '../../server/db/assessments';
import { latestCanaryRuns, listCanaries } from '../../server/db/canaries';
import type { Pool } from '../../server/db/pool';
import { scoreBuckets } from '../../server/db/score-trend';
import { explainTick, type TickExplanation } from '../on-call/explain';
import { type CanaryStatus, type Status, statusBandCause, whatNext } from '../on-call/status';
import { formatStatus } from '../on-call/status-text';
import { readStoredTick } from '../on-call/stored-tick';
import { trendRange, trendsFrom } from '../../server/fleet/trend';
import { siteArgument } from '../site-arg';
import type { CliContext } from '../context';

/**
 * The latest tick explained: the loop's own last assessment when it has one, else (right after a
 * continue-as-new) the latest stored one. An assessment that cannot be read says why instead.
 */
async function latestExplained(
  pool: Pool,
  state: SiteHealthState,
): Promise<Pick<Status['explained'], 'tick' | 'latest' | 'unexplained'>> {
  const own = state.lastAssessment;
  const source =
    own !== null
      ? { tick: own.tick, assessedAt: own.assessedAt, assessmentKey: own.assessmentKey, result: own as unknown }
      : await assessmentAtOrBefore(pool, state.site, null);
  if (source === undefined) return { tick: null, latest: null, unexplained: 'no tick assessed yet' };
  const tick = {
    tick: source.tick,
    assessedAt: new Date(source.assessedAt).toISOString(),
    assessmentKey: source.assessmentKey,
  };
  const read = readStoredTick(source.result);
  if (!read.ok)
    return {
      tick,
      latest: null,
      unexplained: `the assessment of tick ${source.tick} cannot be explained (${read.problem})`,
    };
  const latest: TickExplanation = explainTick(read.tick);
  return { tick, latest, unexplained: null };
}

/**
 * The reasons of the tick that paused the site, while the loop waits after a pause it made: its band is
 * frozen since, so that tick — not the latest — says what put it there. Null otherwise, or when the tick's
 * stored assessment is gone or unreadable (the band is then worded from the latest tick).
 */
async function pauseReasons(pool: Pool, state: SiteHealthState): Promise<string[] | null> {
  const w = state.awaitingHuman;
  if (w === null || w.kind !== 'resisting' || w.assessmentKey === null) return null;
  const row = await findAssessment(pool, w.assessmentKey);
  if (row === undefined) return null;
  const read = readStoredTick(row.result);
  return read.ok ? read.tick.assessment.reasons : null;
}

/** The product's canaries (their latest runs), and the crawlers' own canary requests of the latest tick's window. */
async function canaryStatus(pool: Pool, site: string, latest: TickExplanation | null): Promise<CanaryStatus> {
  const [defined, runs] = await Promise.all([listCanaries(pool, site), latestCanaryRuns(pool, site)]);
  const crawler = latest?.crawlerCanaries ?? null;
  return {
    defined: defined.map((c) => c.id),
    latest: runs.map((r) => ({ canaryId: r.canaryId, result: r.result, ranAt: r.ranAt, reason: r.reason })),
    crawler:
      crawler === null || latest === null
        ? null
        : { ...crawler, from: latest.window.currentFrom, to: latest.window.currentTo },
  };
}

export function registerStatusCommand(program: Command, context: () => CliContext): void {
  program
    .command('status')
    .description(
      "a site's band and scores explained: each signal vs its normal, routes, canaries, the day's trend, what " +
        'the loop does next and why',
    )
    .argument('<site>', 'the site (host name or URL)')
    .option('--history <n>', 'recent ticks to show', '10')
    .option('--json', 'print the state, history and explanation as JSON (docs/on-call.md)')
    .action(async (rawSite: string, options: { json?: boolean; history: string }) => {
      const site = siteArgument(rawSite);
      const n = Number(options.history);
      if (!Number.isInteger(n) || n < 0)
        throw new UserError(`--history: ${describeValue(options.history)} must be a whole number ≥ 0`);
      const ctx = context();
      const client = await ctx.temporal();
      const workflowId = workflowIdForSite(site);
      let state: SiteHealthState;
      let history: TickSummary[] = [];
      try {
        const handle = client.workflow.getHandle(workflowId);
        state = await handle.query(stateQuery);
        if (n > 0) history = await handle.query(historyQuery, n);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError)
          throw new UserError(`site: no health loop for ${site}; start one with \`target-health start ${site}\``);
        throw err;
      }
      const pool = await ctx.db();
      const range = trendRange(new Date());
      const [latest, buckets, paused] = await Promise.all([
        latestExplained(pool, state),
        scoreBuckets(pool, [site], range.from, range.to, range.bucketMs),
        pauseReasons(pool, state),
      ]);
      const canaries = await canaryStatus(pool, site, latest.latest);
      const bandCause = statusBandCause(state, paused);
      const explained: Status['explained'] = {
        ...latest,
        bandCause,
        canaries,
        next: whatNext(state, canaries, bandCause),
        trend: trendsFrom(buckets, [site], range).get(site)!,
      };
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ ...state, history, explained })}\n`);
        return;
      }
      process.stdout.write(
        formatStatus({
          state,
          history,
          explained,
          link: workflowUiLink(ctx.uiUrl(), ctx.temporalSettings().namespace, workflowId),
        }),
      );
    });
}
