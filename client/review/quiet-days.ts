/**
 * The site's quiet days, where a candidate's false alarms show: up to `wanted` whole UTC days among the
 * QUIET_LOOKBACK_DAYS before the incident's day (most recent first) that have traffic and on which the current
 * settings did not degrade — judged from the live loop's band changes (control_audit) where it ran that day
 * (half of the day's ticks stored or more), else from the current settings' replay of the day. Each day is replayed
 * (client/review/replay-span.ts) from a warm-up before it, at the incident's tick, under the current settings and
 * each candidate; a day whose replay scored under half of its ticks (learning, thin traffic) judges nothing and is
 * left out. Cost: a day at 1-minute ticks is 1,440 assessments per setting (docs/review.md, "What to tune").
 */
import type { SiteHealthConfig } from '../../core/control/config';
import { bandBefore, changesBetween } from '../../server/db/history';
import type { Pool } from '../../server/db/pool';
import { ALL_ROUTES } from '../../server/db/signal-store/aggregate';
import { isCalm } from './find-incident';
import { bandMoves } from './gather';
import { addQuiet, NO_ALARMS, quietFigures } from './quiet-figures';
import { replaySpan } from './replay-span';
import type { QuietDays, QuietFigures } from './schema';
import { plural } from '../../core/common/plural';
import { UserError } from '../../core/common/user-error';
import { describeValue } from '@target-health/crawler/events/zod-issues';

const DAY = 86_400_000;
export const QUIET_LOOKBACK_DAYS = 7;
export const DEFAULT_QUIET_DAYS = 3;
/** Live ticks over at least this share of a day: the live loop ran it, and its band changes judge it. */
const LIVE_SHARE = 0.5;
/** A day's current-settings replay scoring fewer of its ticks judges nothing (learning, too little traffic). */
export const MIN_SCORED_SHARE = 0.5;

export async function daysWithTraffic(pool: Pool, site: string, from: number, to: number): Promise<number[]> {
  const { rows } = await pool.query<{ day: Date }>(
    `SELECT bucket AS day FROM rollup_day
      WHERE site = $1 AND route_key = $2 AND bucket >= $3 AND bucket < $4 AND requests > 0
      ORDER BY bucket DESC`,
    [site, ALL_ROUTES, new Date(from), new Date(to)],
  );
  return rows.map((r) => r.day.getTime());
}

/** Whether the live loop stayed calm all day; null when it did not run most of the day (no judgement). */
async function liveCalm(pool: Pool, site: string, day: number, tickMs: number): Promise<boolean | null> {
  const from = new Date(day);
  const to = new Date(day + DAY);
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM assessments WHERE site = $1 AND assessed_at >= $2 AND assessed_at < $3',
    [site, from, to],
  );
  if (Number(rows[0]!.n) < (LIVE_SHARE * DAY) / tickMs) return null;
  const [opening, changes] = await Promise.all([bandBefore(pool, site, from), changesBetween(pool, site, from, to)]);
  return isCalm(opening) && bandMoves(changes).every((m) => isCalm(m.to));
}

/** `--quiet-days`: a whole number of days, 0 (skip) to QUIET_LOOKBACK_DAYS. */
export function parseQuietDays(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(n) || n > QUIET_LOOKBACK_DAYS)
    throw new UserError(
      `--quiet-days: ${describeValue(value)} is not a number of days from 0 to ${QUIET_LOOKBACK_DAYS}; give e.g. ` +
        `--quiet-days ${DEFAULT_QUIET_DAYS}, or --quiet-days 0 to skip the quiet days`,
    );
  return n;
}

export interface QuietInput {
  site: string;
  /** The incident's start (epoch ms): quiet days end before its UTC day. */
  before: number;
  wanted: number;
  tickMs: number;
  warmupMs: number;
  current: SiteHealthConfig;
  candidates: readonly SiteHealthConfig[];
}

export interface QuietResult {
  quietDays: QuietDays;
  /** Per candidate, in order; null when no day was replayed. */
  candidates: (QuietFigures | null)[];
}

export async function quietDays(pool: Pool, o: QuietInput): Promise<QuietResult> {
  const end = Math.floor(o.before / DAY) * DAY;
  const base = { wanted: o.wanted, tickMs: o.tickMs };
  if (o.wanted === 0)
    return {
      quietDays: { ...base, days: [], examined: 0, shortfall: 'skipped with --quiet-days 0', current: null },
      candidates: o.candidates.map(() => null),
    };
  const days = await daysWithTraffic(pool, o.site, end - QUIET_LOOKBACK_DAYS * DAY, end);
  const found: QuietDays['days'] = [];
  const left = { live: 0, replay: 0, thin: 0 };
  let current = NO_ALARMS;
  const candidates = o.candidates.map(() => NO_ALARMS);
  let examined = 0;
  for (const day of days) {
    if (found.length >= o.wanted) break;
    examined += 1;
    const live = await liveCalm(pool, o.site, day, o.tickMs);
    if (live === false) {
      left.live += 1;
      continue;
    }
    const span = { site: o.site, from: day - o.warmupMs, to: day + DAY, tickMs: o.tickMs };
    const inDay = { from: day, to: day + DAY };
    const [cur] = await replaySpan(pool, span, [o.current]);
    const ticks = cur!.ticks.filter((t) => Date.parse(t.asOf) >= day);
    const scored = ticks.filter((t) => t.score !== null).length;
    if (scored < MIN_SCORED_SHARE * ticks.length) {
      left.thin += 1;
      continue;
    }
    const figures = quietFigures(cur!.ticks, inDay, o.current.policy);
    if (live === null && figures.degrades > 0) {
      left.replay += 1;
      continue;
    }
    const runs = await replaySpan(pool, span, o.candidates);
    runs.forEach((r, i) => {
      candidates[i] = addQuiet(candidates[i]!, quietFigures(r.ticks, inDay, o.candidates[i]!.policy));
    });
    current = addQuiet(current, figures);
    found.push({
      day: new Date(day).toISOString().slice(0, 10),
      judgedBy: live === null ? 'replay' : 'live',
      ticks: ticks.length,
      scoredTicks: scored,
    });
  }
  return {
    quietDays: {
      ...base,
      days: found,
      examined,
      shortfall: found.length >= o.wanted ? null : shortfallText(o, end, days.length, found.length, left),
      current: found.length === 0 ? null : current,
    },
    candidates: found.length === 0 ? o.candidates.map(() => null) : candidates,
  };
}

function shortfallText(
  o: QuietInput,
  end: number,
  withTraffic: number,
  found: number,
  left: { live: number; replay: number; thin: number },
): string {
  const why = [
    left.live > 0 ? `${left.live} degraded live` : null,
    left.replay > 0 ? `${left.replay} degraded under the current settings' replay` : null,
    left.thin > 0 ? `${left.thin} scored under half of their ticks (learning or too little traffic)` : null,
  ].filter((x): x is string => x !== null);
  return (
    `${found} of ${o.wanted} found: ${plural(withTraffic, 'whole UTC day')} with traffic in the ` +
    `${QUIET_LOOKBACK_DAYS} before ${new Date(end).toISOString().slice(0, 10)}` +
    (why.length > 0 ? `, of which ${why.join(', ')}` : '')
  );
}
