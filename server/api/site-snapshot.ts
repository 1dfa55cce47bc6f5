/**
 * What `/metrics` says about each site, read at scrape time from where each fact lives:
 *   PostgreSQL — the band the crawler obeys (`site_controls.band`), the latest assessment's score and
 *   parser health (`assessments`), its age, and the tick interval (the gap between the chain's last
 *   two assessments, whose times are the loop's scheduled slots);
 *   Temporal visibility — whether the loop runs, its smoothed score and whether it waits for a person
 *   (the `HealthScore` and `AwaitingHuman` search attributes: they live only in the workflow).
 * One SQL statement and one visibility listing per read, both bounded by a timeout; a source that fails
 * is reported as down and its gauges are left out rather than shown as zeros.
 */
import type { Client } from '@temporalio/client';
import { AwaitingHuman, HealthBand, HealthScore, TargetSite } from '../../loop/search-attributes';
import { WORKFLOW_ID_PREFIX } from '../../core/common/names';
import { SITE_HEALTH_WORKFLOW } from '../../loop/messages';
import type { Pool } from '../db/pool';

/** What PostgreSQL knows about one site. */
export interface StoredSiteFacts {
  band: string | null;
  score: number | null;
  parserHealth: number | null;
  /** Seconds since the latest assessment (database clock); null without one. */
  lastAssessmentAgeSeconds: number | null;
  /** The gap between the chain's last two assessments; null with fewer than two. */
  tickIntervalSeconds: number | null;
}

/** What Temporal visibility knows about a site whose loop is running. */
export interface LoopFacts {
  band: string | null;
  smoothedScore: number | null;
  awaitingHuman: boolean;
}

export interface SiteSnapshot {
  /** Null when PostgreSQL could not be read. */
  stored: Map<string, StoredSiteFacts> | null;
  /** Running loops by site; null when Temporal could not be read. */
  loops: Map<string, LoopFacts> | null;
}

// Sites are those with controls (every loop writes them on its first tick) or registered ones. The two
// lateral reads walk the (site, assessed_at DESC) index: two rows per site, whatever the history's size.
const SITE_FACTS_SQL = `
  SELECT k.site, c.band, a.score, a.parser_health,
         EXTRACT(EPOCH FROM (now() - a.assessed_at))::float8 AS age_seconds,
         CASE WHEN p.chain_id IS NOT DISTINCT FROM a.chain_id
              THEN EXTRACT(EPOCH FROM (a.assessed_at - p.assessed_at))::float8 END AS interval_seconds
    FROM (SELECT site FROM site_controls UNION SELECT site FROM sites) k
    LEFT JOIN site_controls c ON c.site = k.site
    LEFT JOIN LATERAL (SELECT score, parser_health, assessed_at, chain_id FROM assessments
                        WHERE site = k.site ORDER BY assessed_at DESC LIMIT 1) a ON true
    LEFT JOIN LATERAL (SELECT assessed_at, chain_id FROM assessments
                        WHERE site = k.site AND assessed_at < a.assessed_at
                        ORDER BY assessed_at DESC LIMIT 1) p ON true`;

export async function readStoredSiteFacts(pool: Pool): Promise<Map<string, StoredSiteFacts>> {
  const { rows } = await pool.query<{
    site: string;
    band: string | null;
    score: number | null;
    parser_health: number | null;
    age_seconds: number | null;
    interval_seconds: number | null;
  }>(SITE_FACTS_SQL);
  return new Map(
    rows.map((r) => [
      r.site,
      {
        band: r.band,
        score: r.score,
        parserHealth: r.parser_health,
        lastAssessmentAgeSeconds: r.age_seconds,
        tickIntervalSeconds: r.interval_seconds,
      },
    ]),
  );
}

/** Every running site loop with its published search attributes (pages of 1,000). */
export async function readRunningLoops(client: Client): Promise<Map<string, LoopFacts>> {
  const loops = new Map<string, LoopFacts>();
  const query = `WorkflowType="${SITE_HEALTH_WORKFLOW}" AND ExecutionStatus="Running"`;
  for await (const w of client.workflow.list({ query, pageSize: 1_000 })) {
    const attrs = w.typedSearchAttributes;
    const site =
      attrs.get(TargetSite) ??
      (w.workflowId.startsWith(WORKFLOW_ID_PREFIX) ? w.workflowId.slice(WORKFLOW_ID_PREFIX.length) : w.workflowId);
    loops.set(site, {
      band: attrs.get(HealthBand) ?? null,
      smoothedScore: attrs.get(HealthScore) ?? null,
      awaitingHuman: attrs.get(AwaitingHuman) === true,
    });
  }
  return loops;
}

async function withTimeout<T>(work: () => Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface SnapshotReaderOptions {
  pool: Pool;
  temporal: () => Promise<Client>;
  /** A read is reused for this long: scrapes (and several Prometheus servers) cost one read per period. */
  cacheMs?: number;
  timeoutMs?: number;
  /** Told when a source fails (logged by the caller: a failing scrape source is an operator's concern). */
  onError?: (source: 'postgres' | 'temporal', err: unknown) => void;
  now?: () => number;
}

/** A cached reader: concurrent scrapes share the read in flight; a fresh one starts after `cacheMs`. */
export function createSnapshotReader(options: SnapshotReaderOptions): () => Promise<SiteSnapshot> {
  const cacheMs = options.cacheMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  let cached: { at: number; snapshot: Promise<SiteSnapshot> } | undefined;
  const guarded = async <T>(source: 'postgres' | 'temporal', work: () => Promise<T>): Promise<T | null> => {
    try {
      return await withTimeout(work, timeoutMs);
    } catch (err) {
      options.onError?.(source, err);
      return null;
    }
  };
  return () => {
    if (cached === undefined || now() - cached.at >= cacheMs) {
      const at = now();
      const snapshot = Promise.all([
        guarded('postgres', () => readStoredSiteFacts(options.pool)),
        guarded('temporal', async () => readRunningLoops(await options.temporal())),
      ]).then(([stored, loops]) => ({ stored, loops }));
      cached = { at, snapshot };
    }
    return cached.snapshot;
  };
}
