/**
 * A site's status as `target-health status` and the console's Site page show it: the loop's `state` and
 * `history` queries, the latest tick explained signal by signal (its stored assessment), what put the loop in
 * its band, the canaries, the day's trend and what the loop does next. One reader for both surfaces, so the
 * CLI and the console cannot disagree; the pure parts are ./status.ts and ./explain.ts.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { workflowIdForSite } from '../../core/common/names';
import { type SiteHealthState, type TickSummary, historyQuery, stateQuery } from '../../loop/messages';
import { assessmentAtOrBefore } from '../../server/db/assessment-at';
import { findAssessment } from '../../server/db/assessments';
import { latestCanaryRuns, listCanaries } from '../../server/db/canaries';
import type { Pool } from '../../server/db/pool';
import { scoreBuckets } from '../../server/db/score-trend';
import { trendRange, trendsFrom } from '../../server/fleet/trend';
import { explainTick, type TickExplanation } from './explain';
import { type CanaryStatus, type Status, statusBandCause, whatNext } from './status';
import { readStoredTick } from './stored-tick';

export interface SiteStatus {
  state: SiteHealthState;
  history: TickSummary[];
  explained: Status['explained'];
}

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

/** The loop's state and its `historyTicks` latest ticks (0: none asked), or null when no loop of `site` runs. */
export async function queryLoop(
  client: Client,
  site: string,
  historyTicks: number,
): Promise<{ state: SiteHealthState; history: TickSummary[] } | null> {
  try {
    const handle = client.workflow.getHandle(workflowIdForSite(site));
    const state = await handle.query(stateQuery);
    const history = historyTicks > 0 ? await handle.query(historyQuery, historyTicks) : [];
    return { state, history };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/** `site`'s status explained, or null when no loop of it runs. */
export async function readStatus(
  deps: { client: Client; pool: Pool },
  site: string,
  historyTicks: number,
  now: Date = new Date(),
): Promise<SiteStatus | null> {
  const loop = await queryLoop(deps.client, site, historyTicks);
  if (loop === null) return null;
  const { state, history } = loop;
  const { pool } = deps;
  const range = trendRange(now);
  const [latest, buckets, paused] = await Promise.all([
    latestExplained(pool, state),
    scoreBuckets(pool, [site], range),
    pauseReasons(pool, state),
  ]);
  const canaries = await canaryStatus(pool, site, latest.latest);
  const bandCause = statusBandCause(state, paused);
  return {
    state,
    history,
    explained: {
      ...latest,
      bandCause,
      canaries,
      next: whatNext(state, canaries, bandCause),
      trend: trendsFrom(buckets, [site], range).get(site)!,
    },
  };
}
