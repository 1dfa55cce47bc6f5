/**
 * Gathers the facts of one incident from PostgreSQL: the band changes around T (control_audit) to find
 * it (client/review/find-incident.ts), then over its window the ticks (assessments: score and reasons of
 * the tick that changed a band), the control changes folded into actions with the refusal rate before
 * and after each (the store's minute rollups, all routes), the people's decisions, and the refusal peak.
 * The same reads `history` and `chart` use (server/db/history.ts, tools/charts/read-history.ts).
 */
import { readDayTotals, readRateBuckets, minutesPruned } from '../../tools/charts/read-history';
import { dailyBaselines } from '../../tools/charts/series';
import { alertRow } from '../../core/control/alerts';
import type { RateBucket, Resolution } from '../../tools/charts/types';
import { UserError } from '../../core/common/user-error';
import { type BandCause, bandCause } from '../../core/control/band-wording';
import { canaryRunResults, crawlerCanaryTraffic } from '../../server/db/canaries';
import type { ControlChange } from '../../server/db/history';
import type { LoopRecord } from '../loop-record/record';
import type { Pool } from '../../server/db/pool';
import { ACTION_SPAN_MS, groupActions } from './actions';
import { type BandMove, type IncidentWindow, findIncident } from './find-incident';
import { PEAK_WINDOW_MS, type RefusalPeak, refusalPeak, spanRate } from './refusals';
import { earlyFacts, ONSET_LOOKBACK_MS } from './onset';
import type { BandChangeRow, DecisionRow, Review } from './schema';

const MINUTE = 60_000;
const HOUR = 3_600_000;

export interface StoredDecision {
  at: Date;
  kind: 'resume' | 'stop' | 'pause';
  who: string;
  why: string;
  /** As stored: {"mode": "cautious"} or {"mode": "explicit", "concurrency": n, "revisitMultiplier": x}. */
  mode: Record<string, unknown> | null;
  awaitingSince: Date | null;
}

export interface Facts {
  window: IncidentWindow;
  /** Everything of the review but the chart and the tuning. */
  review: Omit<Review, 'chart' | 'tuning'>;
  buckets: RateBucket[];
  peak: RefusalPeak | null;
  /** The median time between stored ticks in the window (the live loop's tick), or null with fewer than two. */
  tickMs: number | null;
}

/** Band moves among control changes: those whose band differs from the one before. */
export function bandMoves(changes: readonly ControlChange[]): BandMove[] {
  return changes
    .filter((c) => c.oldControls === null || c.oldControls.band !== c.newControls.band)
    .map((c) => ({ at: c.at.getTime(), from: c.oldControls?.band ?? null, to: c.newControls.band }));
}

/** The median spacing of the ticks, rounded to the second. */
export function medianSpacing(ticks: readonly { assessedAt: string }[]): number | null {
  if (ticks.length < 2) return null;
  const gaps = ticks
    .slice(1)
    .map((t, i) => Date.parse(t.assessedAt) - Date.parse(ticks[i]!.assessedAt))
    .sort((a, b) => a - b);
  return Math.max(1000, Math.round(gaps[Math.floor(gaps.length / 2)]! / 1000) * 1000);
}

/** The site's decisions in [from, to], with the resume mode and how long the site had waited. */
export async function readDecisions(pool: Pool, site: string, from: Date, to: Date): Promise<StoredDecision[]> {
  const { rows } = await pool.query<{
    decided_at: Date;
    kind: StoredDecision['kind'];
    who: string;
    why: string;
    mode: Record<string, unknown> | null;
    awaiting_since: Date | null;
  }>(
    `SELECT decided_at, kind, who, why, mode, awaiting_since FROM decisions
      WHERE site = $1 AND decided_at >= $2 AND decided_at <= $3
      ORDER BY decided_at, decision_key`,
    [site, from, to],
  );
  return rows.map((r) => ({
    at: r.decided_at,
    kind: r.kind,
    who: r.who,
    why: r.why,
    mode: r.mode,
    awaitingSince: r.awaiting_since,
  }));
}

function modeText(mode: Record<string, unknown> | null): string | null {
  if (mode === null) return null;
  if (mode.mode === 'explicit')
    return `explicit: concurrency ${String(mode.concurrency)}, revisit ×${String(mode.revisitMultiplier)}`;
  return typeof mode.mode === 'string' ? mode.mode : JSON.stringify(mode);
}

/** The minute rollups, or the hour ones once retention has dropped the window's minutes. */
async function readRates(
  pool: Pool,
  site: string,
  from: number,
  to: number,
): Promise<{ level: 'minute' | 'hour'; buckets: RateBucket[]; bucketMs: number }> {
  const pruned = await minutesPruned(pool, site, from, to);
  const resolution: Resolution = pruned ? { level: 'hour', bucketMs: HOUR } : { level: 'minute', bucketMs: MINUTE };
  const start = Math.floor(from / resolution.bucketMs) * resolution.bucketMs;
  return {
    level: resolution.level as 'minute' | 'hour',
    buckets: await readRateBuckets(pool, site, start, to, resolution),
    bucketMs: resolution.bucketMs,
  };
}

/** The range searched for the incident around `t`: [t − before, min(t + after, now)], inclusive. */
export function searchRange(o: { t: number; beforeMs: number; afterMs: number; now: number }): {
  from: Date;
  to: Date;
} {
  return { from: new Date(o.t - o.beforeMs), to: new Date(Math.min(o.t + o.afterMs, o.now) + 1) };
}

/** The incident around `o.t` in the record, with the changes searched; one line (exit 2) when there is none. */
export async function incidentAround(
  record: LoopRecord,
  o: { site: string; t: number; beforeMs: number; afterMs: number; now: number },
): Promise<{ window: IncidentWindow; around: ControlChange[] }> {
  const { site } = o;
  const { from: lower, to: upper } = searchRange(o);
  const [around, opening] = await Promise.all([record.changes(lower, upper), record.bandBefore(lower)]);
  const window = findIncident(bandMoves(around), opening, o.t, o.beforeMs, o.afterMs, o.now);
  if (window === null) {
    throw new UserError(
      `--incident: ${site} did not degrade or resist between ${lower.toISOString()} and ` +
        `${new Date(upper.getTime() - 1).toISOString()}` +
        `${record.source.kind === 'replayed' ? ` (replayed with ${record.source.settingsFrom})` : ''}; ` +
        `give a time nearer the incident or widen ` +
        `--before/--after (\`target-health history ${site}\` shows the bands)`,
    );
  }
  return { window, around };
}

export async function gatherFacts(
  pool: Pool,
  record: LoopRecord,
  o: { site: string; t: number; beforeMs: number; afterMs: number; now: number },
): Promise<Facts> {
  const { site } = o;
  const { window, around } = await incidentAround(record, o);
  const from = new Date(window.from);
  const to = new Date(window.to);
  const inWindow = around.filter((c) => c.at >= from && c.at <= to);
  // From ONSET_LOOKBACK_MS before the window: an onset (a tarpit's slowness) may come hours before the first warning.
  const lookback = window.from - ONSET_LOOKBACK_MS;
  const [allTicks, decisions, rates, ownCanaries, days, alerts] = await Promise.all([
    record.ticks(new Date(lookback), new Date(window.to + 1)),
    readDecisions(pool, site, from, to),
    readRates(pool, site, lookback - PEAK_WINDOW_MS, window.to + ACTION_SPAN_MS + MINUTE),
    canaryRunResults(pool, site, from, new Date(window.to + 1)),
    readDayTotals(pool, site, lookback, window.to + 1),
    record.alerts(new Date(lookback), new Date(window.to + 1)),
  ]);
  const ticks = allTicks.filter((t) => Date.parse(t.assessedAt) >= window.from);
  // The crawlers' canaries at the rates' resolution: whole buckets touching the window.
  const bucketFrom = new Date(Math.floor(window.from / rates.bucketMs) * rates.bucketMs);
  const crawlerCanaries = await crawlerCanaryTraffic(pool, site, bucketFrom, new Date(window.to + 1), rates.level);
  const byKey = new Map(ticks.map((t) => [t.assessmentKey, t]));
  const timeline: BandChangeRow[] = inWindow
    .filter((c) => c.oldControls === null || c.oldControls.band !== c.newControls.band)
    .map((c) => {
      const tick = c.assessmentKey === null || c.decisionKey !== null ? undefined : byKey.get(c.assessmentKey);
      const cause: BandCause =
        c.decisionKey !== null ? { kind: 'person' } : bandCause(c.newControls.band, tick?.reasons ?? []);
      return {
        at: c.at.toISOString(),
        from: c.oldControls?.band ?? null,
        to: c.newControls.band,
        actor: c.actor,
        reason: c.reason,
        score: tick?.score ?? null,
        smoothedScore: tick?.smoothedScore ?? null,
        reasons: tick?.reasons ?? [],
        cause,
      };
    });
  const peak = refusalPeak(rates.buckets, window.from, window.to, rates.bucketMs);
  const firstWarning = timeline.find((b) => b.to === 'degrading' || b.to === 'resisting');
  const early = earlyFacts({
    window,
    buckets: rates.buckets,
    bucketMs: rates.bucketMs,
    baselines: dailyBaselines(days, lookback, window.to + 1),
    timeline,
    changes: inWindow,
    ticks: allTicks.map((t) => ({ at: Date.parse(t.assessedAt), reasons: t.reasons })),
  });
  const decisionRows: DecisionRow[] = decisions.map((d) => ({
    at: d.at.toISOString(),
    who: d.who,
    kind: d.kind,
    why: d.why,
    mode: modeText(d.mode),
    waitedMs: d.awaitingSince === null ? null : d.at.getTime() - d.awaitingSince.getTime(),
  }));
  return {
    window,
    buckets: rates.buckets,
    peak,
    tickMs: medianSpacing(ticks),
    review: {
      site,
      source: record.source,
      incidentAt: new Date(o.t).toISOString(),
      window: {
        from: from.toISOString(),
        to: to.toISOString(),
        openStart: window.openStart,
        openEnd: window.openEnd,
        durationMs: window.to - window.from,
      },
      worstBand: window.worst,
      ticks: ticks.filter((t) => Date.parse(t.assessedAt) < window.to).length,
      refusals: {
        level: rates.level,
        peak:
          peak === null
            ? null
            : {
                rate: peak.rate,
                at: new Date(peak.at).toISOString(),
                reachedAt: new Date(peak.reachedAt).toISOString(),
              },
        during: spanRate(rates.buckets, window.from, window.to),
      },
      lead:
        firstWarning === undefined || peak === null
          ? null
          : {
              firstWarningAt: firstWarning.at,
              peakReachedAt: new Date(peak.reachedAt).toISOString(),
              ms: peak.reachedAt - Date.parse(firstWarning.at),
            },
      early,
      timeline,
      // The alerts of the incident: from its onset (or the window's start, when earlier) to its end.
      alerts: alerts
        .filter(
          (a) =>
            a.at.getTime() >= Math.min(window.from, early.onset === null ? window.from : Date.parse(early.onset.at)),
        )
        .map((a) => alertRow(a, site)),
      actions: groupActions(inWindow, rates.buckets, ACTION_SPAN_MS, record.source.kind === 'replayed'),
      decisions: decisionRows,
      canaries: { product: ownCanaries, crawler: crawlerCanaries },
    },
  };
}
