/**
 * What a site actually served over a period, from its raw events (`request_events`, kept 7 days): the refused
 * ones grouped by outcome, classification rule and marker (the marker names the vendor's page the classifier
 * recognised), a few of the latest refused events as examples, and the period's requests per minute and routes
 * from the minute rollups, so a share can be said "since" a group's first refusal. Reads the refused rows
 * through their partial index (migration 013); the console's Site page words it (client/on-call/served.ts).
 */
import { ALL_ROUTES } from './signal-store/aggregate';
import type { Pool } from './pool';

/** Outcomes that are a refusal: what the loop's refusal rules count. */
export const REFUSED_OUTCOMES = ['hard_block', 'challenge', 'soft_block'] as const;
export type RefusedOutcome = (typeof REFUSED_OUTCOMES)[number];

export interface RefusalGroup {
  outcome: RefusedOutcome;
  /** The classification rule (`challenge_marker`, `status`, `explicit`: the crawler said so, …). */
  rule: string;
  markerId: string | null;
  count: number;
  first: Date;
  last: Date;
  /** Distinct routes (country|pool|session) the group was served on. */
  routes: number;
  /** Lowest and highest HTTP status among them (null: network-level or no status). */
  statuses: { min: number; max: number } | null;
}

export interface RefusalExample {
  at: Date;
  /** The route as `country|pool|session` (empty parts: not reported). */
  route: string;
  status: number | null;
  title: string | null;
  outcome: RefusedOutcome;
  rule: string;
  markerId: string | null;
  pageType: string | null;
}

export interface ServedRead {
  from: Date;
  to: Date;
  groups: RefusalGroup[];
  examples: RefusalExample[];
  /** Requests per minute of the period (all routes), minutes without requests left out. */
  minutes: Array<{ t: number; requests: number }>;
  /** Routes with any request in the period. */
  routes: number;
}

/** Groups read at most (the largest first): a site refused by more kinds at once is read in its top ones. */
const MAX_GROUPS = 20;

export async function readServed(
  pool: Pool,
  site: string,
  period: { from: Date; to: Date },
  examples = 5,
): Promise<ServedRead> {
  const args = [site, period.from, period.to];
  // The outcome list is spelled as in the partial index's predicate, so the planner can use it.
  const refused = `site = $1 AND ts >= $2 AND ts < $3 AND outcome IN ('hard_block', 'challenge', 'soft_block')`;
  const [groups, latest, minutes, routes] = await Promise.all([
    pool.query<{
      outcome: RefusedOutcome;
      rule: string;
      marker_id: string | null;
      n: string;
      first: Date;
      last: Date;
      routes: string;
      min_status: number | null;
      max_status: number | null;
    }>(
      `SELECT outcome, rule, marker_id, count(*) AS n, min(ts) AS first, max(ts) AS last,
              count(DISTINCT concat_ws('|', coalesce(country, ''), coalesce(pool, ''), coalesce(session, '')))
                AS routes,
              min(status) AS min_status, max(status) AS max_status
         FROM request_events WHERE ${refused}
        GROUP BY outcome, rule, marker_id ORDER BY count(*) DESC, outcome, rule, marker_id LIMIT ${MAX_GROUPS}`,
      args,
    ),
    pool.query<{
      ts: Date;
      country: string | null;
      pool: string | null;
      session: string | null;
      status: number | null;
      title: string | null;
      outcome: RefusedOutcome;
      rule: string;
      marker_id: string | null;
      page_type: string | null;
    }>(
      `SELECT ts, country, pool, session, status, title, outcome, rule, marker_id, page_type
         FROM request_events WHERE ${refused} ORDER BY ts DESC LIMIT $4`,
      [...args, examples],
    ),
    pool.query<{ t: Date; requests: string }>(
      `SELECT bucket AS t, requests FROM rollup_minute
        WHERE site = $1 AND route_key = $4 AND bucket >= date_trunc('minute', $2::timestamptz) AND bucket < $3
          AND requests > 0 ORDER BY bucket`,
      [...args, ALL_ROUTES],
    ),
    pool.query<{ n: string }>(
      `SELECT count(DISTINCT route_key) AS n FROM rollup_minute
        WHERE site = $1 AND route_key <> $4 AND bucket >= date_trunc('minute', $2::timestamptz) AND bucket < $3
          AND requests > 0`,
      [...args, ALL_ROUTES],
    ),
  ]);
  return {
    from: period.from,
    to: period.to,
    groups: groups.rows.map((r) => ({
      outcome: r.outcome,
      rule: r.rule,
      markerId: r.marker_id,
      count: Number(r.n),
      first: r.first,
      last: r.last,
      routes: Number(r.routes),
      statuses: r.min_status === null || r.max_status === null ? null : { min: r.min_status, max: r.max_status },
    })),
    examples: latest.rows.map((r) => ({
      at: r.ts,
      route: `${r.country ?? ''}|${r.pool ?? ''}|${r.session ?? ''}`,
      status: r.status,
      title: r.title,
      outcome: r.outcome,
      rule: r.rule,
      markerId: r.marker_id,
      pageType: r.page_type,
    })),
    minutes: minutes.rows.map((r) => ({ t: r.t.getTime(), requests: Number(r.requests) })),
    routes: Number(routes.rows[0]?.n ?? 0),
  };
}
