/**
 * Runs a site's canaries and records them: the due ones on a schedule (the control loop's activity,
 * every tick, paused or not) or all of them now (`target-health canary run`). Results come back as
 * plain JSON for Temporal payloads.
 */
import { type CanaryEvidence, canaryWindowInput } from '../../core/canaries/latest';
import { pageTextCleaner } from '../../core/canaries/page-url';
import { runKeyFor, slotFor } from '../../core/canaries/schedule';
import type { CanaryRunSummary, CanaryTrigger } from '../../core/canaries/types';
import { cutText } from '@target-health/crawler/events/well-formed';
import {
  type CanaryRunRecord,
  findCanaryRuns,
  latestCanaryRuns,
  listCanaries,
  recordCanaryRunOnce,
  recordedRunKeys,
  type StoredCanary,
  type StoredCanaryRun,
  toSummary,
} from '../db/canaries';
import type { Pool } from '../db/pool';
import type { Logger } from '../logging/logger';
import type { CanaryResults } from '../../core/scoring/window';
import type { SiteClassifierConfigInput } from '@target-health/crawler/events/config';
import type { RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import { runCanary, type CanaryRun } from './run-canary';
import type { CanarySettings } from './settings';

export interface CanaryRunnerDeps {
  pool: Pool;
  logger: Logger;
  settings: CanarySettings;
  /** The site's classifier settings, so canaries are judged exactly like its production traffic. */
  classifierConfig?: (site: string) => Promise<SiteClassifierConfigInput | undefined>;
  /** Extra trusted CA (PEM) for fetches. */
  ca?: string;
  /** Called after each canary (the activity heartbeats with it). */
  onProgress?: () => void;
  /** Aborts in-flight fetches (the activity's cancellation). */
  signal?: AbortSignal;
}

export interface RunDueCanariesResult {
  site: string;
  /** The time the schedule was evaluated at (ISO-8601). */
  asOf: string;
  /** Canaries fetched by this call (0 when nothing was due). */
  fetched: number;
  /**
   * Runs of each canary's current slot, whether this call or an earlier one (a retry, an earlier tick in
   * the same slot) recorded them.
   */
  current: CanaryRunSummary[];
  /** Each canary's latest result (current definitions only). */
  latest: CanaryRunSummary[];
  /** The `canary` block of the current window (from `latest`; see core/canaries/latest.ts). */
  window: CanaryResults;
  /** For the notification and the state query, most serious first. */
  evidence: CanaryEvidence[];
  /** Request-outcome events (canary: true) of `current`; ingest them keyed by eventId (repeats are no-ops). */
  events: RequestOutcomeEventInput[];
  /** When the next canary of this site becomes due (ISO-8601), null without canaries. */
  nextDueAt: string | null;
  /** Canaries defined for the site. */
  canaries: number;
}

/** Runs the canaries of `site` whose slot at `asOf` has no run yet; safe to call every tick and to retry. */
export async function runDueCanaries(deps: CanaryRunnerDeps, site: string, asOf?: Date): Promise<RunDueCanariesResult> {
  const at = asOf ?? (await databaseNow(deps.pool));
  const canaries = await listCanaries(deps.pool, site);
  const slots = new Map(canaries.map((c) => [c.id, slotFor(c.id, c.definition.intervalMs, at.getTime())]));
  const recorded = await recordedRunKeys(
    deps.pool,
    [...slots.values()].map((s) => s.runKey),
  );
  const due = canaries.filter((c) => !recorded.has(slots.get(c.id)!.runKey));

  await forEachLimited(due, deps.settings.concurrency, async (canary) => {
    const slot = slots.get(canary.id)!;
    await runAndRecord(deps, canary, slot.runKey, slot.scheduledAt, 'schedule');
  });

  const byId = new Map(canaries.map((c) => [c.id, c]));
  const currentRuns = await findCanaryRuns(
    deps.pool,
    [...slots.values()].map((s) => s.runKey),
  );
  const current = currentRuns.map((run) => summaryOf(run, byId.get(run.canaryId)));
  const latest = await latestCanaryRuns(deps.pool, site);
  const { canary: window, evidence } = canaryWindowInput(latest, { asOf: at });
  const nextDueAt = canaries.length === 0 ? null : [...slots.values()].map((s) => s.nextAt).sort()[0]!;
  return {
    site,
    asOf: at.toISOString(),
    fetched: due.length,
    current,
    latest,
    window,
    evidence,
    events: currentRuns.flatMap((r) => (r.event === null ? [] : [r.event])),
    nextDueAt,
    canaries: canaries.length,
  };
}

/** Runs every canary of `site` now (trigger `manual`) and records the runs. */
export async function runCanariesNow(deps: CanaryRunnerDeps, site: string): Promise<CanaryRunSummary[]> {
  const canaries = await listCanaries(deps.pool, site);
  const results: CanaryRunSummary[] = [];
  await forEachLimited(canaries, deps.settings.concurrency, async (canary) => {
    const scheduledAt = new Date().toISOString();
    const run = await runAndRecord(deps, canary, runKeyFor(canary.id, scheduledAt), scheduledAt, 'manual');
    results.push(summaryOf(run, canary));
  });
  return results.sort((a, b) => a.canaryId.localeCompare(b.canaryId));
}

async function runAndRecord(
  deps: CanaryRunnerDeps,
  canary: StoredCanary,
  runKey: string,
  scheduledAt: string,
  trigger: CanaryTrigger,
): Promise<StoredCanaryRun> {
  let run: CanaryRun;
  try {
    const classifier = await deps.classifierConfig?.(canary.site);
    run = await runCanary({
      site: canary.site,
      definition: canary.definition,
      settings: deps.settings,
      runKey,
      classifier,
      signal: deps.signal,
      ca: deps.ca,
    });
  } catch (err) {
    // A bug in one canary's check must not stop the others or fail the tick; it is recorded (not
    // counted against the site) and logged loudly.
    deps.logger.error({ err, canary: canary.id }, 'canary check failed unexpectedly');
    const message = pageTextCleaner(canary.definition.url)(err instanceof Error ? err.message : String(err));
    const d = canary.definition;
    const route = d.route !== undefined ? `route ${d.route}` : d.proxy !== undefined ? 'proxy' : 'direct';
    run = internalErrorRun(route, `internal error while checking the canary: ${message}`, message);
  }
  // A cancelled activity's half-done fetch says nothing about the site: record nothing, leave the slot due.
  if (deps.signal?.aborted)
    throw deps.signal.reason instanceof Error ? deps.signal.reason : new Error('canary run cancelled');
  const stored = await storeRun(deps, { runKey, canary, trigger, scheduledAt, ...run });
  const log = {
    canary: canary.id,
    result: stored.run.result,
    status: stored.run.status,
    latencyMs: stored.run.latencyMs,
    inserted: stored.inserted,
    reason: stored.run.reason,
  };
  if (stored.run.result === 'pass') deps.logger.debug(log, 'canary passed');
  else deps.logger.warn(log, `canary ${stored.run.result}`);
  deps.onProgress?.();
  return stored.run;
}

/**
 * Records a run; when PostgreSQL refuses the run's *data* (a value it cannot store that slipped past the
 * cleaning in server/db/canaries.ts), records the run again without its details, as an internal error that
 * does not count against the site. One odd page then becomes one odd result, never an exception the
 * activity retries forever — which would stop its site's loop. Anything else (the database is down)
 * is thrown: retrying that is right.
 */
export async function storeRun(
  deps: Pick<CanaryRunnerDeps, 'pool' | 'logger'>,
  record: CanaryRunRecord,
): Promise<{ run: StoredCanaryRun; inserted: boolean }> {
  try {
    return await recordCanaryRunOnce(deps.pool, record);
  } catch (err) {
    if (!isDataError(err)) throw err;
    deps.logger.error(
      { err, canary: record.canary.id, runKey: record.runKey },
      'canary run refused by the database; recording it without its details',
    );
    const message = err instanceof Error ? err.message : String(err);
    const fallback = internalErrorRun(
      record.route,
      `internal error: the run could not be stored (${message}); recorded without its details`,
      `was ${record.result}: ${record.reason}`,
    );
    return recordCanaryRunOnce(deps.pool, { ...record, ...fallback, ranAt: record.ranAt });
  }
}

/**
 * PostgreSQL refused the values, not the request: SQLSTATE class 22 (data exception: bad text,
 * numbers out of range) or 23 (a constraint). Retrying the same values fails the same way.
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23)[0-9A-Z]{3}$/.test(code);
}

/** A run that failed on our side (not counted against the site), its texts cut to the columns' sizes. */
function internalErrorRun(route: string, reason: string, evidence: string): CanaryRun {
  return {
    result: 'error',
    reason: cutText(reason, 300),
    evidence: cutText(evidence, 500),
    outcome: null,
    rule: null,
    checks: [],
    route,
    countsForSite: false,
    status: null,
    latencyMs: null,
    bytes: null,
    ranAt: new Date(),
    event: null,
  };
}

function summaryOf(run: StoredCanaryRun, canary: StoredCanary | undefined): CanaryRunSummary {
  return toSummary(run, {
    name: canary?.name ?? run.canaryId.split('/').pop() ?? run.canaryId,
    url: canary?.definition.url ?? '',
    intervalMs: canary?.definition.intervalMs ?? 0,
  });
}

async function databaseNow(pool: Pool): Promise<Date> {
  const { rows } = await pool.query<{ now: Date }>('SELECT now() AS now');
  return rows[0]!.now;
}

async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
