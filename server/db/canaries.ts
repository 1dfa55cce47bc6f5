/**
 * Canary definitions and runs in PostgreSQL (server/db/migrations/004_canaries.sql), and the baseline-trust
 * rule: which days canaries failed, so the baseline read can leave them out.
 */
import type { PoolClient } from 'pg';
import {
  type CanaryDefinition,
  CanaryDefinitionError,
  type CanaryDefinitionJson,
  type CanaryEntry,
  canaryId,
  definitionToJson,
  readStoredDefinition,
} from '../../core/canaries/definition';
import type { CheckedExpectation } from '../../core/canaries/check';
import { redactPageUrl } from '../../core/canaries/page-url';
import {
  type CanaryResultKind,
  type CanaryRunSummary,
  type CanaryTrigger,
  type CrawlerCanaries,
  crawlerCanaries,
} from '../../core/canaries/types';
import { cutText, storableJson, wellFormed } from '@target-health/crawler/events/well-formed';
import type { Outcome, RequestOutcomeEventInput } from '@target-health/crawler/events/event';
import type { Pool } from './pool';

type Queryable = Pool | PoolClient;

export interface StoredCanary {
  id: string;
  site: string;
  name: string;
  revision: number;
  definition: CanaryDefinition;
  createdAt: Date;
  updatedAt: Date;
}

interface CanaryRow {
  id: string;
  site: string;
  name: string;
  revision: number;
  definition: unknown;
  created_at: Date;
  updated_at: Date;
}

function toStoredCanary(row: CanaryRow): StoredCanary {
  // Stored rows were validated when written; parsing again guards against hand edits in psql (without
  // the engine- and environment-dependent checks: the runner repeats those before every fetch).
  const parsed = readStoredDefinition(row.definition);
  if (!parsed.ok)
    throw new Error(
      `canary ${row.id}: the stored definition is invalid (${parsed.errors.join('; ')}); fix it with ` +
        `\`target-health canary add\``,
    );
  return {
    id: row.id,
    site: row.site,
    name: row.name,
    revision: row.revision,
    definition: parsed.definition,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const CANARY_COLUMNS = 'id, site, name, revision, definition, created_at, updated_at';

export async function listCanaries(q: Queryable, site?: string): Promise<StoredCanary[]> {
  const { rows } =
    site === undefined
      ? await q.query<CanaryRow>(`SELECT ${CANARY_COLUMNS} FROM canaries ORDER BY site, name`)
      : await q.query<CanaryRow>(`SELECT ${CANARY_COLUMNS} FROM canaries WHERE site = $1 ORDER BY name`, [site]);
  return rows.map(toStoredCanary);
}

export async function findCanary(q: Queryable, id: string): Promise<StoredCanary | undefined> {
  const { rows } = await q.query<CanaryRow>(`SELECT ${CANARY_COLUMNS} FROM canaries WHERE id = $1`, [id]);
  return rows[0] && toStoredCanary(rows[0]);
}

/** Removes a definition (its runs stay: they are the history baseline trust reads). */
export async function removeCanary(q: Queryable, id: string): Promise<boolean> {
  const result = await q.query('DELETE FROM canaries WHERE id = $1', [id]);
  return result.rowCount === 1;
}

export interface CanaryToSave extends CanaryEntry {
  /** Where the entry came from, for error messages: "" (one canary) or "canaries[3]" (a config file). */
  origin: string;
}

export interface SaveCanariesResult {
  created: string[];
  updated: string[];
  unchanged: string[];
  /** With `prune`: canaries of the file's sites that the file no longer lists. */
  removed: string[];
}

/**
 * Writes definitions in one transaction, after checking that every site is registered (`target-health
 * start` registers it): either all are saved or none, and a refusal throws CanaryDefinitionError with
 * one line per problem. A definition identical to the stored one keeps its revision.
 */
export async function saveCanaries(
  pool: Pool,
  entries: readonly CanaryToSave[],
  options: { prune?: boolean } = {},
): Promise<SaveCanariesResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const sites = [...new Set(entries.map((e) => e.site))];
    const { rows } = await client.query<{ site: string }>(
      'SELECT site FROM sites WHERE site = ANY($1::text[]) FOR SHARE',
      [sites],
    );
    const known = new Set(rows.map((r) => r.site));
    const errors = entries
      .filter((e) => !known.has(e.site))
      .map(
        (e) =>
          `${e.origin === '' ? '' : `${e.origin}.`}site: ${e.site} is not a registered site; register it with ` +
          `\`target-health start ${e.site}\` first`,
      );
    if (errors.length > 0) throw new CanaryDefinitionError([...new Set(errors)]);

    const result: SaveCanariesResult = { created: [], updated: [], unchanged: [], removed: [] };
    for (const entry of entries) {
      const id = canaryId(entry.site, entry.definition.name);
      const json: CanaryDefinitionJson = definitionToJson(entry.definition);
      const upsert = await client.query<{ inserted: boolean }>(
        `INSERT INTO canaries (id, site, name, interval_ms, definition) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET
           definition = EXCLUDED.definition, interval_ms = EXCLUDED.interval_ms,
           revision = canaries.revision + 1, updated_at = now()
         WHERE canaries.definition IS DISTINCT FROM EXCLUDED.definition
         RETURNING (xmax = 0) AS inserted`,
        [id, entry.site, entry.definition.name, entry.definition.intervalMs, JSON.stringify(json)],
      );
      const row = upsert.rows[0];
      if (row === undefined) result.unchanged.push(id);
      else if (row.inserted) result.created.push(id);
      else result.updated.push(id);
    }
    if (options.prune) {
      const keep = entries.map((e) => canaryId(e.site, e.definition.name));
      const removed = await client.query<{ id: string }>(
        'DELETE FROM canaries WHERE site = ANY($1::text[]) AND NOT (id = ANY($2::text[])) RETURNING id',
        [sites, keep],
      );
      result.removed = removed.rows.map((r) => r.id).sort();
    }
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export interface CanaryRunRecord {
  runKey: string;
  canary: Pick<StoredCanary, 'id' | 'site' | 'revision'>;
  trigger: CanaryTrigger;
  scheduledAt: string;
  ranAt: Date;
  result: CanaryResultKind;
  countsForSite: boolean;
  outcome: Outcome | null;
  rule: string | null;
  reason: string;
  evidence: string;
  route: string;
  status: number | null;
  latencyMs: number | null;
  bytes: number | null;
  checks: CheckedExpectation[];
  event: RequestOutcomeEventInput | null;
}

export interface StoredCanaryRun {
  runKey: string;
  canaryId: string;
  site: string;
  revision: number;
  trigger: CanaryTrigger;
  scheduledAt: string;
  ranAt: string;
  result: CanaryResultKind;
  countsForSite: boolean;
  outcome: Outcome | null;
  reason: string;
  evidence: string;
  route: string;
  status: number | null;
  latencyMs: number | null;
  event: RequestOutcomeEventInput | null;
}

interface RunRow {
  run_key: string;
  canary_id: string;
  site: string;
  revision: number;
  trigger: CanaryTrigger;
  scheduled_at: Date;
  ran_at: Date;
  result: CanaryResultKind;
  counts_for_site: boolean;
  outcome: Outcome | null;
  reason: string;
  evidence: string;
  route: string;
  status: number | null;
  latency_ms: number | null;
  event: RequestOutcomeEventInput | null;
}

const RUN_COLUMNS =
  'run_key, canary_id, site, revision, trigger, scheduled_at, ran_at, result, counts_for_site, outcome, ' +
  'reason, evidence, route, status, latency_ms, event';

function toStoredRun(row: RunRow): StoredCanaryRun {
  return {
    runKey: row.run_key,
    canaryId: row.canary_id,
    site: row.site,
    revision: row.revision,
    trigger: row.trigger,
    scheduledAt: row.scheduled_at.toISOString(),
    ranAt: row.ran_at.toISOString(),
    result: row.result,
    countsForSite: row.counts_for_site,
    outcome: row.outcome,
    reason: row.reason,
    evidence: row.evidence,
    route: row.route,
    status: row.status,
    latencyMs: row.latency_ms,
    event: row.event,
  };
}

/**
 * Records a run once per run key. A second attempt (a retried activity, a concurrent tick) finds the
 * first attempt's row and gets it back unchanged: at-least-once fetching, exactly-once recording.
 *
 * Every string is made storable first (packages/crawler/src/events/well-formed.ts): the texts quote the crawled page,
 * and a NUL or half an emoji in them would make PostgreSQL refuse the whole row.
 */
export async function recordCanaryRunOnce(
  q: Queryable,
  run: CanaryRunRecord,
): Promise<{ run: StoredCanaryRun; inserted: boolean }> {
  const inserted = await q.query(
    `INSERT INTO canary_runs (run_key, canary_id, site, revision, trigger, scheduled_at, ran_at, result,
                              counts_for_site, outcome, rule, reason, evidence, route, status, latency_ms, bytes,
                              checks, event)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (run_key) DO NOTHING`,
    [
      run.runKey,
      run.canary.id,
      run.canary.site,
      run.canary.revision,
      run.trigger,
      run.scheduledAt,
      run.ranAt,
      run.result,
      run.countsForSite,
      run.outcome,
      run.rule === null ? null : wellFormed(run.rule),
      wellFormed(run.reason),
      cutText(wellFormed(run.evidence), 500, ''),
      wellFormed(run.route),
      run.status,
      run.latencyMs,
      run.bytes,
      storableJson(run.checks),
      run.event === null ? null : storableJson(run.event),
    ],
  );
  const { rows } = await q.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM canary_runs WHERE run_key = $1`, [run.runKey]);
  return { run: toStoredRun(rows[0]!), inserted: inserted.rowCount === 1 };
}

/** The run keys among `keys` that are already recorded. */
export async function recordedRunKeys(q: Queryable, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await q.query<{ run_key: string }>(
    'SELECT run_key FROM canary_runs WHERE run_key = ANY($1::text[])',
    [keys],
  );
  return new Set(rows.map((r) => r.run_key));
}

export async function findCanaryRuns(q: Queryable, keys: readonly string[]): Promise<StoredCanaryRun[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM canary_runs WHERE run_key = ANY($1::text[]) ORDER BY canary_id`,
    [keys],
  );
  return rows.map(toStoredRun);
}

/**
 * The latest run of each current canary of `site` (of its current revision), as summaries. Canaries
 * that have not run since they were defined or edited are absent.
 */
export async function latestCanaryRuns(q: Queryable, site: string): Promise<CanaryRunSummary[]> {
  const { rows } = await q.query<RunRow & { name: string; definition: CanaryDefinitionJson; interval_ms: string }>(
    `SELECT DISTINCT ON (c.id) c.name, c.definition, c.interval_ms, ${RUN_COLUMNS.split(', ')
      .map((c) => `r.${c}`)
      .join(', ')}
       FROM canaries c
       JOIN canary_runs r ON r.canary_id = c.id AND r.revision = c.revision
      WHERE c.site = $1
      ORDER BY c.id, r.ran_at DESC, r.scheduled_at DESC`,
    [site],
  );
  return rows.map((row) =>
    toSummary(toStoredRun(row), { name: row.name, url: row.definition.url, intervalMs: Number(row.interval_ms) }),
  );
}

/** A run as the rest of the product sees it; the page URL without its secrets (core/canaries/page-url.ts). */
export function toSummary(
  run: StoredCanaryRun,
  canary: { name: string; url: string; intervalMs: number },
): CanaryRunSummary {
  return {
    canaryId: run.canaryId,
    site: run.site,
    name: canary.name,
    url: redactPageUrl(canary.url),
    route: run.route,
    result: run.result,
    reason: run.reason,
    evidence: run.evidence,
    outcome: run.outcome,
    status: run.status,
    latencyMs: run.latencyMs,
    countsForSite: run.countsForSite,
    scheduledAt: run.scheduledAt,
    ranAt: run.ranAt,
    trigger: run.trigger,
    intervalMs: canary.intervalMs,
    revision: run.revision,
  };
}

// ---------------------------------------------------------------------------------------------------
// Baseline trust

/**
 * Which days are too suspect to be part of a site's normal. Defaults: a UTC day with at least one
 * mismatched canary run (the site served wrong content that day — any of its traffic may be affected),
 * or at least three failed runs (blocked or error: one timeout through a flaky proxy is noise, three are
 * a pattern). Runs that failed on our own configuration (`counts_for_site = false`) never count.
 */
export interface BaselineTrustPolicy {
  minMismatchedRuns: number;
  minFailedRuns: number;
}
export const DEFAULT_BASELINE_TRUST: Readonly<BaselineTrustPolicy> = Object.freeze({
  minMismatchedRuns: 1,
  minFailedRuns: 3,
});

export interface CanaryDay {
  /** UTC date, YYYY-MM-DD. */
  day: string;
  runs: number;
  failures: number;
  mismatches: number;
  /** Left out of the baseline under the policy. */
  failed: boolean;
}

/**
 * Per UTC day touching [from, to): canary run counts and whether the day counts as failed. Days without runs are
 * absent.
 */
export async function canaryDays(
  q: Queryable,
  site: string,
  from: Date,
  to: Date,
  policy: BaselineTrustPolicy = DEFAULT_BASELINE_TRUST,
): Promise<CanaryDay[]> {
  // Whole UTC days: a day is trusted or not as a whole, so a failure at 23:00 flags the day even when
  // the range ends at noon.
  const { rows } = await q.query<{ day: string; runs: string; failures: string; mismatches: string }>(
    `SELECT to_char(date_trunc('day', ran_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
            count(*) AS runs,
            count(*) FILTER (WHERE result IN ('blocked', 'error')) AS failures,
            count(*) FILTER (WHERE result = 'mismatch') AS mismatches
       FROM canary_runs
      WHERE site = $1 AND counts_for_site
        AND ran_at >= date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
        AND ran_at < (date_trunc('day', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE 'UTC')
                      + interval '1 day') AT TIME ZONE 'UTC'
      GROUP BY 1
      ORDER BY 1`,
    [site, from, to],
  );
  return rows.map((r) => {
    const failures = Number(r.failures);
    const mismatches = Number(r.mismatches);
    return {
      day: r.day,
      runs: Number(r.runs),
      failures,
      mismatches,
      failed: mismatches >= policy.minMismatchedRuns || failures >= policy.minFailedRuns,
    };
  });
}

/**
 * UTC dates (YYYY-MM-DD, ascending) touching [from, to) on which the site's canaries failed under
 * `policy` (default {@link DEFAULT_BASELINE_TRUST}); the baseline read leaves these days out.
 */
export async function canaryFailedDays(
  pool: Queryable,
  site: string,
  from: Date,
  to: Date,
  policy: BaselineTrustPolicy = DEFAULT_BASELINE_TRUST,
): Promise<string[]> {
  if (!(to.getTime() > from.getTime())) return [];
  return (await canaryDays(pool, site, from, to, policy)).filter((d) => d.failed).map((d) => d.day);
}

/**
 * Deletes runs that ran before `before` (retention). Baseline trust reads the last 15 days, so keep at
 * least that; 90 days keeps a season of history for incident reviews. Returns the number deleted.
 */
export async function deleteCanaryRunsBefore(q: Queryable, before: Date): Promise<number> {
  const result = await q.query('DELETE FROM canary_runs WHERE ran_at < $1', [before]);
  return result.rowCount ?? 0;
}

/**
 * The product's own canary fetches of `site` in [from, to) that went into the signal store as canary
 * traffic (runs with an event: a configuration error fetched nothing), and how many were not `ok` —
 * what to take from the store's canary counts to leave the crawlers' own (core/canaries/types.ts
 * `crawlerCanaries`). An event's time is its run's `ran_at`, so the same bounds select the same fetches.
 */
export async function ownCanaryFetches(q: Queryable, site: string, from: Date, to: Date): Promise<CrawlerCanaries> {
  const { rows } = await q.query<{ requests: string; failed: string }>(
    `SELECT count(*) AS requests, count(*) FILTER (WHERE outcome IS DISTINCT FROM 'ok') AS failed
       FROM canary_runs
      WHERE site = $1 AND ran_at >= $2 AND ran_at < $3 AND event IS NOT NULL`,
    [site, from, to],
  );
  return { requests: Number(rows[0]?.requests ?? 0), failed: Number(rows[0]?.failed ?? 0) };
}

/**
 * The crawlers' canary requests to `site` in [from, to) (the rollups' all-routes row: whole minutes, or
 * whole hours once the minutes are past retention), for a span no tick covers whole (`start`, a
 * review's incident).
 */
export async function crawlerCanaryTraffic(
  q: Queryable,
  site: string,
  from: Date,
  to: Date,
  level: 'minute' | 'hour' = 'minute',
): Promise<CrawlerCanaries> {
  const table = level === 'hour' ? 'rollup_hour' : 'rollup_minute';
  const [{ rows }, own] = await Promise.all([
    q.query<{ runs: string | null; failures: string | null }>(
      `SELECT sum(canary_runs) AS runs, sum(canary_failures) AS failures FROM ${table}
        WHERE site = $1 AND route_key = '*' AND bucket >= $2 AND bucket < $3`,
      [site, from, to],
    ),
    ownCanaryFetches(q, site, from, to),
  ]);
  return crawlerCanaries({ runs: Number(rows[0]?.runs ?? 0), failures: Number(rows[0]?.failures ?? 0) }, own);
}

/** The product's canary runs of `site` in [from, to) that count for it, by result. */
export async function canaryRunResults(
  q: Queryable,
  site: string,
  from: Date,
  to: Date,
): Promise<Record<CanaryResultKind, number>> {
  const { rows } = await q.query<{ result: CanaryResultKind; n: string }>(
    'SELECT result, count(*) AS n FROM canary_runs WHERE site = $1 AND ran_at >= $2 AND ran_at < $3 AND ' +
      'counts_for_site GROUP BY result',
    [site, from, to],
  );
  const out: Record<CanaryResultKind, number> = { pass: 0, mismatch: 0, blocked: 0, error: 0 };
  for (const r of rows) out[r.result] = Number(r.n);
  return out;
}

/**
 * The product's own canary fetches of `site` in [from, to), read once, counted per window in memory as
 * `ownCanaryFetches` counts them: for replays, which ask the same question on every tick of a period.
 */
export async function periodCanaryFetches(
  q: Queryable,
  site: string,
  from: Date,
  to: Date,
): Promise<(from: Date, to: Date) => CrawlerCanaries | null> {
  const { rows } = await q.query<{ t: Date; ok: boolean }>(
    `SELECT ran_at AS t, outcome IS NOT DISTINCT FROM 'ok' AS ok FROM canary_runs
      WHERE site = $1 AND ran_at >= $2 AND ran_at < $3 AND event IS NOT NULL`,
    [site, from, to],
  );
  const runs = rows.map((r) => ({ t: r.t.getTime(), ok: r.ok }));
  return (a, b) => {
    if (a < from || b > to) return null;
    let requests = 0;
    let failed = 0;
    for (const r of runs)
      if (r.t >= a.getTime() && r.t < b.getTime()) {
        requests += 1;
        if (!r.ok) failed += 1;
      }
    return { requests, failed };
  };
}
